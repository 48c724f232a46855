import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { round } from "./load.js";
import { readProbe } from "./probe-client.js";
import type { Tracked } from "./procs.js";
import type { BenchRedis } from "./redis.js";
import { sleep } from "./wait.js";

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS, in kB). */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  const kb = Number(line?.match(/(\d+)/)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS for pid ${pid}`);
  return round(kb / 1024, 1);
}

/** Direct children of a process: taskgate's stdio upstream. */
export function childPids(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

export interface RedisActivity {
  intervals: number;
  /**
   * Per interval: every command (inside scripts too), EVALSHA alone, Redis's socket reads (a
   * large pipeline takes many), and the client's Redis writes, i.e. round trips (from the probe).
   */
  commands: number;
  evalsha: number;
  reads: number;
  roundTrips: number;
  calls: Record<string, number>;
}

/** What Redis and the probed client did over `intervals` intervals of `intervalMs`, per interval. */
export async function activityPerInterval(redis: BenchRedis, client: Tracked, intervalMs: number, intervals: number): Promise<RedisActivity> {
  const snapshot = async () => ({
    calls: await redis.commandCalls(),
    stats: await redis.info("stats"),
    roundTrips: (await readProbe(client)).redisWrites,
  });
  const before = await snapshot();
  await sleep(intervalMs * intervals);
  const after = await snapshot();
  const stat = (name: string) => Number(after.stats.get(name)) - Number(before.stats.get(name));
  const calls: Record<string, number> = {};
  for (const [name, n] of after.calls) {
    const delta = n - (before.calls.get(name) ?? 0);
    if (delta > 0 && name !== "info") calls[name] = round(delta / intervals, 2);
  }
  const infoCalls = (after.calls.get("info") ?? 0) - (before.calls.get("info") ?? 0);
  return {
    intervals,
    commands: round((stat("total_commands_processed") - infoCalls) / intervals, 2),
    evalsha: calls.evalsha ?? 0,
    reads: round((stat("total_reads_processed") - infoCalls) / intervals, 2),
    roundTrips: round((after.roundTrips - before.roundTrips) / intervals, 2),
    calls,
  };
}
