import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./redis.js";
import { waitFor } from "./wait-for.js";

/**
 * Replication authenticates as its own ACL user on every server, so a test can cut one primary's
 * replication link (the user disabled, its connections killed) while the replica stays up and
 * listed by the sentinels or the cluster: a replica that falls behind, as a network cut makes one.
 * Clients use the default user and never notice.
 */
export const REPLICATION_USER = ["--user", "repl", "on", ">repl-secret", "+psync", "+replconf", "+ping"];
export const REPLICA_AUTH = ["--masteruser", "repl", "--masterauth", "repl-secret"];

export interface RedisNode {
  port: number;
  /** host:port */
  address: string;
  url: string;
  /** SIGKILL by default: a crash. Resolves once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** One redis-server (or redis-sentinel with `sentinel`) on a free loopback port, answering PING. */
export async function startNode(args: string[], dir: string, sentinel?: { conf: (port: number) => string }): Promise<RedisNode> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let child: ChildProcess;
    if (sentinel) {
      const file = join(dir, `sentinel-${port}.conf`);
      await writeFile(file, sentinel.conf(port));
      child = spawn("redis-sentinel", [file], { stdio: "ignore" });
    } else {
      const base = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--dbfilename", `dump-${port}.rdb`];
      child = spawn("redis-server", [...base, "--loglevel", "warning", ...args], { stdio: "ignore" });
    }
    const node: RedisNode = { port, address: `127.0.0.1:${port}`, url: `redis://127.0.0.1:${port}`, kill: (signal) => killChild(child, signal) };
    try {
      await waitFor(() => child.exitCode === null && ping(port), { timeoutMs: 10_000, what: `redis on ${port}` });
      return node;
    } catch (err) {
      await node.kill();
      if (attempt >= 3) throw err;
    }
  }
}

export interface ReplicatedRedis {
  primary: RedisNode;
  replicas: RedisNode[];
  dir: string;
  stop(): Promise<void>;
}

/** A primary and `replicas` replicas, each replica in sync (state=online) when this resolves. */
export async function startReplicated(replicas = 1, extraArgs: string[] = []): Promise<ReplicatedRedis> {
  const dir = await mkdtemp(join(tmpdir(), "taskgate-ha-"));
  const nodes: RedisNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startNode([...REPLICATION_USER, ...extraArgs], dir);
    nodes.push(primary);
    for (let i = 0; i < replicas; i++) {
      nodes.push(await startNode([...REPLICATION_USER, ...REPLICA_AUTH, ...extraArgs, "--replicaof", "127.0.0.1", String(primary.port)], dir));
    }
    await waitFor(async () => (await onlineReplicas(primary.port)) === replicas, { timeoutMs: 15_000, what: `${replicas} replicas in sync` });
    return { primary, replicas: nodes.slice(1), dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Replicas of the primary on `port` that are in sync (INFO replication, state=online). */
export async function onlineReplicas(port: number): Promise<number> {
  const info = await command(port, ["INFO", "replication"]);
  return (String(info).match(/state=online/g) ?? []).length;
}

/**
 * Cut the replication of the primary on `port`: its replicas stay up (and listed) but receive
 * nothing more. Returns the function that lets them catch up again.
 */
export async function cutReplication(port: number): Promise<() => Promise<void>> {
  await command(port, ["ACL", "SETUSER", "repl", "off"]);
  await command(port, ["CLIENT", "KILL", "USER", "repl"]);
  return async () => void (await command(port, ["ACL", "SETUSER", "repl", "on"]));
}

export interface Sentinels {
  nodes: string[];
  stop(): Promise<void>;
}

/** `count` sentinels (quorum 2) watching the primary on `primaryPort` as `name`, each seeing `replicas` replicas. */
export async function startSentinels(primaryPort: number, name: string, replicas: number, count = 3): Promise<Sentinels> {
  const dir = await mkdtemp(join(tmpdir(), "taskgate-sentinel-"));
  const nodes: RedisNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  const conf = (port: number) =>
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 4000`,
      `sentinel parallel-syncs ${name} 1`,
      "",
    ].join("\n");
  try {
    for (let i = 0; i < count; i++) nodes.push(await startNode([], dir, { conf }));
    for (const node of nodes) {
      await waitFor(async () => ((await command(node.port, ["SENTINEL", "REPLICAS", name])) as unknown[]).length >= replicas, {
        timeoutMs: 20_000,
        what: `sentinel ${node.address} to see ${replicas} replicas`,
      });
    }
    return { nodes: nodes.map((n) => n.address), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The primary's port as the sentinel on `sentinelPort` names it now. */
export async function primaryPortOf(sentinelPort: number, name: string): Promise<number> {
  const [, port] = (await command(sentinelPort, ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name])) as [string, string];
  return Number(port);
}

/** One command on a fresh connection, closed after. */
export async function command(port: number, args: string[]): Promise<unknown> {
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return await client.call(args[0]!, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

async function ping(port: number): Promise<boolean> {
  return (await command(port, ["PING"]).catch(() => "")) === "PONG";
}

async function killChild(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const late = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await gone;
  clearTimeout(late);
}
