import { spawn, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./ports.js";
import { StopWaiting, waitFor } from "./wait-for.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = join(ROOT, "dist/cli.js");
export const DEMO = join(ROOT, "dist/demo/main.js");
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

export interface RunningProcess {
  proc: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawn a node script; keeps its output for assertions and failure messages; stop() waits for exit. */
export function runNode(args: string[], env: NodeJS.ProcessEnv = {}): RunningProcess {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const output = new OutputTail(200_000);
  const keep = (chunk: Buffer) => output.push(chunk.toString());
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    proc,
    output: () => output.text(),
    async stop(signal = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The last `limit` characters a process wrote. Chunks are joined when read or when twice the limit
 * piled up, not on every chunk: a gateway logging at debug writes thousands of chunks, and copying
 * the whole tail for each was a measurable share of a worker's CPU.
 */
class OutputTail {
  private chunks: string[] = [];
  private length = 0;
  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length > 2 * this.limit) this.text();
  }

  text(): string {
    const joined = this.chunks.join("").slice(-this.limit);
    this.chunks = [joined];
    this.length = joined.length;
    return joined;
  }
}

export interface GatewayProcess extends RunningProcess {
  url: string;
  mcpUrl: string;
  port: number;
}

/**
 * A real taskgate process on a free loopback port, started from a config object; resolves when
 * /readyz is 200. `cli`: another build's dist/cli.js (the rolling-upgrade test's previous version).
 */
export async function startGateway(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}, cli = CLI): Promise<GatewayProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "taskgate-test-"));
  const file = join(dir, "taskgate.yaml");
  // A short drain unless the test sets one: stopping a gateway with calls in flight stays quick.
  const tasks = { drainMs: 300, ...(config.tasks as Record<string, unknown> | undefined) };
  writeFileSync(file, stringify({ log: { level: "debug" }, ...config, tasks, listen: { host: "127.0.0.1", port } }));
  const running = runNode([cli, "--config", file], env);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      // Waiting longer cannot help a process that exited (a configuration it refused).
      if (running.proc.exitCode !== null) throw new StopWaiting(`taskgate exited: ${running.output()}`);
      return (await statusOf(`${url}/readyz`)) === 200;
    },
    // A bound, not a wait: while the full suite builds the previous version beside it, a start
    // on this 2-core machine once printed nothing for 15 s.
    { timeoutMs: 30_000, what: `taskgate ready on ${url}` },
  ).catch((err: Error) => {
    void running.stop("SIGKILL");
    throw new Error(`${err.message}\n--- output ---\n${running.output()}`);
  });
  const stop = async (signal?: NodeJS.Signals) => {
    await running.stop(signal);
    rmSync(dir, { recursive: true, force: true });
  };
  return { ...running, stop, url, port, mcpUrl: `${url}/mcp` };
}

/**
 * The status of a GET, or undefined when nothing answers. Plain node:http, not fetch: a gateway
 * is polled some 20 times while it starts, and each refused fetch cost the test worker more CPU
 * than the request itself.
 */
function statusOf(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
  });
}

/**
 * The demo server over Streamable HTTP on a free port (or `port`, to start it again where it was);
 * `--native-tasks` or `--modern` for its other servers, `--event-store` for resumable streams.
 */
export async function startDemoHttp(flags: string[] = [], port?: number): Promise<RunningProcess & { mcpUrl: string; port: number }> {
  port ??= await freePort();
  const running = runNode([DEMO, "--http", String(port), ...flags]);
  await waitFor(() => running.output().includes("listening"), { timeoutMs: 10_000, what: "demo server listening" });
  return { ...running, port, mcpUrl: `http://127.0.0.1:${port}/mcp` };
}

export function demoStdio(flags: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [DEMO, ...flags] };
}

/** Direct children of a process (the stdio upstream of a gateway). */
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

/** Whether a process with this pid exists (one of another user's, which signal 0 may not reach, included). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
