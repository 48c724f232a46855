import { pathToFileURL } from "node:url";
import { PROBE } from "../paths.js";
import type { Tracked } from "./procs.js";

/** What fixtures/probe.ts reports from inside a taskgate process. */
export interface ProbeReading {
  redisWrites: number;
  redisCommands: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Memory V8 has committed per heap space, MiB. */
  spaces: Record<string, number>;
}

/**
 * Node arguments and environment that load the probe into a process talking to `redisUrl`;
 * `collect`: each reading follows a full garbage collection (never used while load runs).
 */
export function probeLaunch(redisUrl: string, collect = false): { nodeArgs: string[]; env: NodeJS.ProcessEnv } {
  return { nodeArgs: [...(collect ? ["--expose-gc"] : []), "--import", pathToFileURL(PROBE).href], env: { BENCH_PROBE_REDIS_PORT: new URL(redisUrl).port } };
}

const MARK = "bench-probe ";

/** Ask the probe for a reading (SIGUSR2) and wait, at most 5 s, for the line it prints. */
export function readProbe(proc: Tracked): Promise<ProbeReading> {
  const stderr = proc.proc.stderr;
  if (!stderr) return Promise.reject(new Error(`${proc.name} has no stderr to read the probe from`));
  return new Promise((resolve, reject) => {
    let text = "";
    const done = (err: Error | undefined, reading?: ProbeReading) => {
      clearTimeout(timer);
      stderr.off("data", onData);
      if (err) reject(err);
      else resolve(reading!);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const at = text.indexOf(MARK);
      const end = at < 0 ? -1 : text.indexOf("\n", at);
      if (end > at) done(undefined, JSON.parse(text.slice(at + MARK.length, end)) as ProbeReading);
    };
    const timer = setTimeout(() => done(new Error(`no probe reading from ${proc.name} within 5 s`)), 5_000);
    stderr.on("data", onData);
    process.kill(proc.pid, "SIGUSR2");
  });
}
