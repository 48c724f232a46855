import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";
import { startProcess, type Tracked } from "./procs.js";
import { parseInfo } from "./redis.js";
import { clusterNodePort, GiveUp, waitFor } from "./wait.js";

const run = promisify(execFile);

/** One master of the bench's Redis Cluster, with a client of its own for INFO. */
export interface ClusterNode {
  address: string;
  proc: Tracked;
  client: Redis;
  info(section: string): Promise<Map<string, string>>;
}

export interface BenchCluster {
  /** Seed nodes as `store.cluster` takes them. */
  seeds: string[];
  nodes: ClusterNode[];
  /** A cluster client for reading what taskgate wrote. */
  client: Cluster;
  close(): Promise<void>;
}

/**
 * A Redis Cluster of `masters` masters (no replicas) on free loopback ports, nothing written to
 * disk: `redis-server --cluster-enabled yes` each (tracked, so they die with the bench), joined by
 * `redis-cli --cluster create`. Resolves once every node says cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-bench-cluster-"));
  const nodes: ClusterNode[] = [];
  let client: Cluster | undefined;
  const close = async () => {
    client?.disconnect();
    for (const node of nodes) node.client.disconnect();
    await Promise.all(nodes.map((node) => node.proc.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = new Set<number>();
    for (let i = 0; i < masters; i++) {
      const node = await startNode(dir, ports);
      ports.add(Number(node.address.split(":")[1]));
      nodes.push(node);
    }
    const seeds = nodes.map((n) => n.address);
    await run("redis-cli", ["--cluster", "create", ...seeds, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 30_000 });
    for (const node of nodes)
      await waitFor(async () => String(await node.client.cluster("INFO")).includes("cluster_state:ok"), `cluster_state:ok on ${node.address}`, 20_000, 200);
    client = new Cluster(
      seeds.map((s) => ({ host: "127.0.0.1", port: Number(s.split(":")[1]) })),
      { enableAutoPipelining: true },
    );
    client.on("error", () => undefined);
    return { seeds, nodes, client, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * A node on a free port whose cluster bus port (10000 above it) exists and is free. A port found
 * free can be taken before the node binds it: the node then exits, and starts again on another.
 */
async function startNode(dir: string, taken: ReadonlySet<number>): Promise<ClusterNode> {
  for (let attempt = 1; ; attempt++) {
    const node = spawnNode(await clusterNodePort(taken), dir);
    try {
      await waitFor(() => {
        if (node.proc.proc.exitCode !== null || node.proc.proc.signalCode !== null)
          throw new GiveUp(`redis-server ${node.address} exited: ${node.proc.output()}`);
        return node.client.ping().then(
          (r) => r === "PONG",
          () => false,
        );
      }, `cluster node ${node.address}`);
      return node;
    } catch (err) {
      node.client.disconnect();
      await node.proc.stop();
      if (attempt >= 3) throw err;
    }
  }
}

function spawnNode(port: number, dir: string): ClusterNode {
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
    "5000",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--loglevel",
    "warning",
  ];
  const proc = startProcess(`redis-cluster-${port}`, "redis-server", args);
  const client = new Redis({ host: "127.0.0.1", port, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
  client.on("error", () => undefined);
  return { address: `127.0.0.1:${port}`, proc, client, info: async (section) => parseInfo(await client.info(section)) };
}

/** Calls per command from each node's `INFO commandstats`, summed, the bench's own INFO left out. */
export async function clusterCommandCalls(nodes: ClusterNode[]): Promise<Map<string, number>[]> {
  return Promise.all(
    nodes.map(async (node) => {
      const calls = new Map<string, number>();
      for (const [key, value] of await node.info("commandstats")) {
        const match = /calls=(\d+)/.exec(value);
        if (key.startsWith("cmdstat_") && match) calls.set(key.slice("cmdstat_".length), Number(match[1]));
      }
      return calls;
    }),
  );
}
