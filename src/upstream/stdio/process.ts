import { spawn, type ChildProcessByStdio } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import type { StdioUpstreamConfig } from "../../config/schema.js";
import { UpstreamError } from "../connector.js";
import { childEnvironment } from "./child-env.js";

/**
 * The one place that starts and ends upstream processes. Each child leads its own process group,
 * so whatever it forks is ended with it (the SDK's stdio transport orphans those on close).
 */

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface UpstreamProcess {
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles once, when the group leader has exited. */
  readonly exited: Promise<ExitInfo>;
  /**
   * Exited and its stdout read to the end, so a response written just before exiting is not lost;
   * at most `DRAIN_AFTER_EXIT_MS` later when something else it started still holds the pipe.
   */
  readonly finished: Promise<ExitInfo>;
  hasExited(): boolean;
}

const DRAIN_AFTER_EXIT_MS = 250;

/** Groups still alive, for the last-resort cleanup when taskgate itself exits without close(). */
const liveGroups = new Set<number>();
process.once("exit", () => liveGroups.forEach((pid) => signalGroup(pid, "SIGKILL")));

export function spawnUpstream(name: string, config: StdioUpstreamConfig): Promise<UpstreamProcess> {
  const env = childEnvironment(process.env, config);
  const child = spawn(config.command, config.args, { cwd: config.cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    child.once("error", (err) => reject(new UpstreamError(`cannot start upstream '${name}': ${err.message}`, "exited")));
    child.once("spawn", () => resolve(track(child, child.pid as number)));
  });
}

function track(child: ChildProcessByStdio<Writable, Readable, Readable>, pid: number): UpstreamProcess {
  let done = false;
  liveGroups.add(pid);
  // A write to a child that just died fails with EPIPE; the exit is what reports it.
  child.stdin.on("error", () => undefined);
  child.on("error", () => undefined);
  const exited = new Promise<ExitInfo>((resolve) =>
    child.once("exit", (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const drained = new Promise<void>((resolve) => child.stdout.once("close", resolve));
  const finished = exited.then((info) => Promise.race([drained, delay(DRAIN_AFTER_EXIT_MS)]).then(() => info));
  return { pid, stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exited, finished, hasExited: () => done };
}

/**
 * The kill ladder: close stdin and give the server `graceMs` to leave on its own, then SIGTERM the
 * whole group, then SIGKILL it. Resolves once the leader has exited and the group is empty.
 */
export async function stopUpstream(proc: UpstreamProcess, graceMs: number): Promise<ExitInfo> {
  proc.stdin.end();
  if (!(await exitsWithin(proc, graceMs))) {
    signalGroup(proc.pid, "SIGTERM");
    if (!(await exitsWithin(proc, graceMs))) signalGroup(proc.pid, "SIGKILL");
  }
  const info = await proc.finished;
  await reapGroup(proc.pid, graceMs);
  return info;
}

/** After the leader is gone, end what it left behind in its group (SIGTERM, then SIGKILL). */
export async function reapGroup(pid: number, graceMs: number): Promise<void> {
  if (groupAlive(pid)) {
    signalGroup(pid, "SIGTERM");
    if (!(await groupEndsWithin(pid, graceMs))) {
      signalGroup(pid, "SIGKILL");
      await groupEndsWithin(pid, graceMs);
    }
  }
  liveGroups.delete(pid);
}

async function groupEndsWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await delay(20);
  }
  return true;
}

/**
 * True while some process of the group still runs. A killed member stays a zombie until its new
 * parent (often pid 1, which may reap slowly) collects it; on Linux those are not counted.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = liveMembersOnLinux(pgid);
  return members === undefined || members > 0;
}

/** Members of group `pgid` that are not zombies, from /proc; undefined where /proc cannot tell. */
function liveMembersOnLinux(pgid: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let live = 0;
  for (const pid of entries) {
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const stat = readStat(pid);
    const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields && Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") live++;
  }
  return live;
}

function readStat(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined; // it ended while we looked
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function exitsWithin(proc: UpstreamProcess, ms: number): Promise<boolean> {
  if (proc.hasExited()) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const result = await Promise.race([proc.exited.then(() => true), timeout]);
  clearTimeout(timer);
  return result;
}
