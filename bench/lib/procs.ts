import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { ROOT } from "../paths.js";

/**
 * Every process the bench starts, so that all of them die with it: on a normal end, an error, a
 * signal, or the bench process exiting. Each child leads its own process group, so killing the
 * group also ends what it spawned (mcp-proxy's stdio server).
 */
export interface Tracked {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<Tracked>();

/** The cores the load generator and the servers run on, when `taskset` can pin them. */
export interface Pinning {
  load: string;
  servers: string;
}

let pinning: Pinning | undefined;

/** Pin this process (the load generator) to one core and every server started later to another. */
export function pinCores(cores: number): { pinning?: Pinning; reason?: string } {
  if (cores < 2) return { reason: `only ${cores} core: load and servers cannot be separated` };
  try {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
    pinning = { load: "0", servers: cores === 2 ? "1" : `1-${cores - 1}` };
    return { pinning };
  } catch (err) {
    return { reason: `taskset failed: ${(err as Error).message}` };
  }
}

export function startProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Tracked {
  const [cmd, argv] = pinning ? ["taskset", ["-c", pinning.servers, command, ...args]] : [command, args];
  const proc = spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-50_000));
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const tracked: Tracked = {
    name,
    proc,
    pid: proc.pid ?? -1,
    output: () => output,
    stop: async () => {
      await stopGroup(proc, exited);
      running.delete(tracked);
    },
  };
  proc.once("error", (err) => void (output += `\nspawn failed: ${err.message}`));
  running.add(tracked);
  return tracked;
}

async function stopGroup(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
  signalGroup(proc.pid, "SIGTERM");
  const timer = setTimeout(() => signalGroup(proc.pid!, "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  // Whatever the leader left behind in its group goes too.
  signalGroup(proc.pid, "SIGKILL");
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((t) => t.stop()));
}

/** Last resort, synchronous: the bench is exiting and cannot wait. */
export function killAllNow(): void {
  for (const t of running) signalGroup(t.pid, "SIGKILL");
  running.clear();
}
