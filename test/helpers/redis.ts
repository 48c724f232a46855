import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";

/** The server started once for the whole run by global-setup.ts. */
export function redisUrl(): string {
  return inject("redisUrl");
}

/** A key prefix of its own per test, so tests sharing one server never see each other's keys. */
export function uniquePrefix(): string {
  return `test:${randomBytes(6).toString("hex")}:`;
}

export interface StartRedisOptions {
  appendonly?: boolean;
  /** Kept after stop (for restart tests); without it a temp dir is made and removed. */
  dir?: string;
  /** Without it, a free loopback port. */
  port?: number;
}

export interface RedisProcess {
  url: string;
  port: number;
  /** SIGTERM is a clean shutdown; SIGKILL a crash. Escalates to SIGKILL after a deadline. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A dedicated redis-server on loopback, answering PING when this resolves. */
export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisProcess> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), "taskgate-redis-")));
  // A free port found by listening on 0 can be taken before redis binds it: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      const child = await spawnRedis(port, dir, opts.appendonly ?? false);
      return { url: `redis://127.0.0.1:${port}`, port, stop: (signal) => stopRedis(child, signal, opts.dir ? undefined : dir) };
    } catch (err) {
      if (opts.port !== undefined || attempt >= 3 || err instanceof MissingRedisError) {
        if (!opts.dir) await rm(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
}

async function spawnRedis(port: number, dir: string, appendonly: boolean): Promise<ChildProcess> {
  // With AOF, fsync every write (the setting docs/guides/replicas-redis.md recommends): a SIGKILL then loses nothing acknowledged.
  const aof = appendonly ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...aof];
  const child = spawn("redis-server", [...args, "--dir", dir, "--daemonize", "no", "--loglevel", "warning"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "ENOENT" ? new MissingRedisError() : err));
    child.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal}) on port ${port}: ${output}`)));
  });
  failed.catch(() => {});
  try {
    await Promise.race([waitUntilServing(child, port, 10_000), failed]);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return child;
}

class MissingRedisError extends Error {
  constructor() {
    super("redis-server was not found on PATH; the tests need a real one: apt-get install redis-server");
  }
}

async function stopRedis(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM", ownDir?: string): Promise<void> {
  if (!hasExited(child)) {
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill(signal);
    const timer = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), 5_000).unref());
    if ((await Promise.race([gone, timer])) === "late") {
      child.kill("SIGKILL");
      await gone;
    }
  }
  if (ownDir) await rm(ownDir, { recursive: true, force: true });
}

/** Exited, killed, or never started at all. */
function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

/**
 * Poll until the server on `port` is this child: a server answering there may be another test's
 * that took the port first, and then this child is about to exit with "address in use".
 */
async function waitUntilServing(child: ChildProcess, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !hasExited(child)) {
    if ((await servingPid(port, 500)) === child.pid) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
}

/**
 * The `process_id` of the server on `port` once it has loaded its data (INFO is answered while
 * an AOF is still loading, PING is not); undefined until then.
 */
function servingPid(port: number, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const done = (pid?: number) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(timeoutMs, () => done());
    socket.once("error", () => done());
    socket.once("connect", () => socket.write("INFO server persistence\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      const pid = /process_id:(\d+)\r\n/.exec(reply);
      const loading = /loading:(\d)\r\n/.exec(reply);
      if (pid && loading) done(loading[1] === "0" ? Number(pid[1]) : undefined);
      else if (reply.startsWith("-")) done();
    });
  });
}
