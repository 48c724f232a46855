import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./redis.js";
import { waitFor } from "./wait-for.js";

const run = promisify(execFile);

export interface RedisClusterProcess {
  /** Seed nodes as `store.cluster` takes them. */
  nodes: string[];
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster of `masters` masters (no replicas) on free loopback ports:
 * `redis-server --cluster-enabled yes` each, joined by `redis-cli --cluster create`. Resolves once
 * every node reports cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const dir = await mkdtemp(join(tmpdir(), "taskgate-cluster-"));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports = await distinctPorts(masters);
    for (const port of ports) children.push(spawnNode(port, dir));
    for (const port of ports) await waitFor(() => ping(port), { timeoutMs: 10_000, what: `cluster node on ${port}` });
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 30_000 });
    for (const port of ports) await waitFor(() => clusterOk(port), { timeoutMs: 15_000, what: `cluster_state:ok on ${port}` });
    return { nodes: addresses, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function spawnNode(port: number, dir: string): ChildProcess {
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    `nodes-${port}.conf`,
    "--cluster-node-timeout",
    "2000",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--loglevel",
    "warning",
  ];
  return spawn("redis-server", args, { stdio: "ignore" });
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

async function ping(port: number): Promise<boolean> {
  const { stdout } = await run("redis-cli", ["-p", String(port), "ping"], { timeout: 2_000 }).catch(() => ({ stdout: "" }));
  return stdout.trim() === "PONG";
}

async function clusterOk(port: number): Promise<boolean> {
  const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "info"], { timeout: 2_000 }).catch(() => ({ stdout: "" }));
  return stdout.includes("cluster_state:ok");
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await gone;
}
