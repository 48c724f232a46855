import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { clusterNodePort } from "../../bench/lib/wait.js";
import { StopWaiting, waitFor } from "./wait-for.js";
import { REPLICA_AUTH, REPLICATION_USER } from "./redis-ha.js";

const run = promisify(execFile);

export interface RedisClusterProcess {
  /** Seed nodes as `store.cluster` takes them. */
  nodes: string[];
  /** SIGKILL the node on `port` (a crash). */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Replicas per master (`--cluster-replicas`); each in sync when this resolves. */
  replicas?: number;
  /** cluster-node-timeout: how long a node is unreachable before the cluster fails it over. */
  nodeTimeoutMs?: number;
}

/**
 * A real Redis Cluster of `masters` masters on free loopback ports, with `replicas` replicas each:
 * `redis-server --cluster-enabled yes` each, joined by `redis-cli --cluster create`. Resolves once
 * every node reports cluster_state:ok and every replica is in sync. Replication authenticates as
 * its own user (redis-ha.ts), so a test can cut one primary's link.
 */
export async function startRedisCluster(masters = 3, opts: ClusterOptions = {}): Promise<RedisClusterProcess> {
  const replicas = opts.replicas ?? 0;
  const dir = await mkdtemp(join(tmpdir(), "taskgate-cluster-"));
  const children = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all([...children.values()].map((child) => stopChild(child)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const [port, child] = await startNode(dir, opts.nodeTimeoutMs ?? 2000, new Set(ports));
      ports.push(port);
      children.set(port, child);
    }
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", String(replicas), "--cluster-yes"], { timeout: 30_000 });
    for (const port of ports) await waitFor(() => clusterOk(port), { timeoutMs: 15_000, what: `cluster_state:ok on ${port}` });
    if (replicas > 0) await waitFor(() => replicasInSync(ports[0]!, masters * replicas), { timeoutMs: 20_000, what: "every replica in sync" });
    const kill = async (port: number) => {
      const child = children.get(port);
      if (child) await stopChild(child);
    };
    return { nodes: addresses, kill, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Replicas the cluster lists as connected to their master (CLUSTER NODES: `slave` … `connected`), and each master's INFO says online. */
async function replicasInSync(port: number, expected: number): Promise<boolean> {
  const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "nodes"], { timeout: 2_000 }).catch(() => ({ stdout: "" }));
  const masters = stdout.split("\n").filter((l) => / master /.test(l) || /,master /.test(l) || /myself,master/.test(l));
  let online = 0;
  for (const line of masters) {
    const address = line.split(" ")[1]?.split("@")[0] ?? "";
    const masterPort = address.split(":")[1];
    if (!masterPort) continue;
    const info = await run("redis-cli", ["-p", masterPort, "info", "replication"], { timeout: 2_000 }).catch(() => ({ stdout: "" }));
    online += (info.stdout.match(/state=online/g) ?? []).length;
  }
  return online >= expected;
}

function spawnNode(port: number, dir: string, nodeTimeoutMs: number): ChildProcess {
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
    String(nodeTimeoutMs),
    "--dbfilename",
    `dump-${port}.rdb`,
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--loglevel",
    "warning",
    ...REPLICATION_USER,
    ...REPLICA_AUTH,
  ];
  return spawn("redis-server", args, { stdio: "ignore" });
}

/**
 * A node on a free port whose cluster bus port (10000 above it) is free too. A port found free can
 * be taken before the node binds it (another test's server, or a connection's local port): the
 * node then exits, and it is started again on other ports, as startRedis does (redis.ts).
 */
async function startNode(dir: string, nodeTimeoutMs: number, taken: ReadonlySet<number>): Promise<[number, ChildProcess]> {
  for (let attempt = 1; ; attempt++) {
    const port = await clusterNodePort(taken);
    const child = spawnNode(port, dir, nodeTimeoutMs);
    try {
      await waitFor(
        () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new StopWaiting(`redis-server on ${port} exited`);
          return answersAsClusterNode(port);
        },
        { timeoutMs: 10_000, what: `cluster node on ${port}` },
      );
      return [port, child];
    } catch (err) {
      await stopChild(child);
      if (attempt >= 3) throw err;
    }
  }
}

/** The node on `port` answers CLUSTER INFO: it is up, and a cluster node (a plain Redis that took the port refuses it). */
async function answersAsClusterNode(port: number): Promise<boolean> {
  const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "info"], { timeout: 2_000 }).catch(() => ({ stdout: "" }));
  return stdout.includes("cluster_state:");
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
