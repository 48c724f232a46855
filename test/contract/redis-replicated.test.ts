import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusedByShard, StoreUnavailableError, StoreUnconfirmedError } from "../../src/store/contract.js";
import { createStore } from "../../src/store/index.js";
import { keySlot } from "../../src/store/redis/key-slot.js";
import { HELD_SPARES, RedisKeys, shardOf } from "../../src/store/redis/keys.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { capturingLogger } from "../fixtures/upstreams.js";
import { useCleanups } from "../helpers/cleanups.js";
import { command, cutReplication, primaryPortOf, startReplicated, startSentinels, type ReplicatedRedis, type Sentinels } from "../helpers/redis-ha.js";
import { startRedisCluster, type RedisClusterProcess } from "../helpers/redis-cluster.js";
import { uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { LEASE, newTask } from "./task-store.contract.js";

const cleanups = useCleanups();
/** The bound a write meets once replication is cut: each refusal waits this long. */
const WAIT_MS = 300;
/** The bound of writes that must be confirmed: a loaded machine can take longer than WAIT_MS to confirm one. */
const STEADY_MS = 10_000;

const end = (now = Date.now()) => ({ kind: "complete" as const, leaseToken: LEASE.token, now, outcome: { result: { content: [] } } });

describe("acknowledged writes on a primary with a replica (WAIT)", () => {
  let redis: ReplicatedRedis;
  beforeAll(async () => {
    redis = await startReplicated(1);
  }, 60_000);
  afterAll(async () => redis?.stop());

  const open = (waitForReplicas?: "listed" | number, waitTimeoutMs = STEADY_MS, keyPrefix = uniquePrefix()) =>
    cleanups.track(
      createStore({
        redisUrl: redis.primary.url,
        keyPrefix,
        waitTimeoutMs,
        ...(waitForReplicas !== undefined ? { waitForReplicas } : {}),
      }),
    ) as RedisStore;

  it("waits for the replica the primary lists, and a created task is on the replica when the create answers", async () => {
    const store = open();
    const task = newTask();
    await store.createTask(task, LEASE);
    expect(store.topology.needed()).toBe(1);
    expect(await command(redis.replicas[0]!.port, ["EXISTS", store.keys.task(task.id)])).toBe(1);
  });

  it("acknowledges no create, outcome, answer or cancel the replica did not confirm, and all of them once it catches up", async () => {
    const steady = open(1);
    const store = open(1, WAIT_MS, steady.keys.prefix);
    const running = newTask();
    const answered = newTask();
    await steady.createTask(running, LEASE);
    await steady.createTask(answered, LEASE);
    await steady.transitionTask(answered.id, {
      kind: "start-input",
      leaseToken: LEASE.token,
      now: Date.now(),
      addInputRequests: { q1: { method: "elicitation/create" } },
    });
    const restore = await cutReplication(redis.primary.port);
    cleanups.defer(restore);
    const unconfirmed = (work: Promise<unknown>) => expect(work).rejects.toBeInstanceOf(StoreUnconfirmedError);
    await unconfirmed(store.createTask(newTask(), LEASE));
    await unconfirmed(store.transitionTask(running.id, end()));
    await unconfirmed(store.transitionTask(running.id, { kind: "request-cancel", principal: running.principal, now: Date.now() }));
    await unconfirmed(store.addInputResponses(answered.id, answered.principal, { q1: { action: "accept" } }, Date.now()));
    // In a batch, each acknowledged write answers for itself; a status message waits for nothing.
    const [outcome, status] = await store.transitionTasks([
      { id: running.id, change: end() },
      { id: answered.id, change: { kind: "set-status-message", statusMessage: "s", leaseToken: LEASE.token, now: Date.now() } },
    ]);
    expect(outcome).toBeInstanceOf(StoreUnconfirmedError);
    expect(status).toMatchObject({ ok: true });
    await restore();
    // A retry finds the outcome the first try wrote (terminal already), and is confirmed all the same.
    await waitFor(async () => (await store.transitionTask(running.id, end()).catch(() => undefined)) !== undefined, { what: "the outcome write confirmed" });
    expect(await command(redis.replicas[0]!.port, ["HGET", store.keys.task(running.id), "status"])).toBe("completed");
    const answer = await steady.addInputResponses(answered.id, answered.principal, { q1: { action: "accept" } }, Date.now());
    expect(answer?.task.inputResponses).toEqual({ q1: { action: "accept" } });
  });

  it("answers at once with waitForReplicas 0, which trades the confirmation away", async () => {
    const store = open(0);
    const restore = await cutReplication(redis.primary.port);
    cleanups.defer(restore);
    const task = newTask();
    await store.createTask(task, LEASE);
    expect(await command(redis.replicas[0]!.port, ["EXISTS", store.keys.task(task.id)])).toBe(0);
    await restore();
  });

  it("tells a primary refusing writes (min-replicas-to-write) from a store that does not answer", async () => {
    const store = open();
    await command(redis.primary.port, ["CONFIG", "SET", "min-replicas-to-write", "2"]);
    cleanups.defer(() => command(redis.primary.port, ["CONFIG", "SET", "min-replicas-to-write", "0"]));
    const refused = await store.createTask(newTask(), LEASE).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect(refusedByShard(refused)).toBe(true);
    await store.close();
    expect(refusedByShard(await store.createTask(newTask(), LEASE).catch((err: unknown) => err))).toBe(false);
  });

  it("warns at start about a maxmemory-policy that may evict tasks", async () => {
    const store = open();
    expect(await store.configurationWarnings()).toEqual([]);
    await command(redis.primary.port, ["CONFIG", "SET", "maxmemory-policy", "volatile-lru"]);
    cleanups.defer(() => command(redis.primary.port, ["CONFIG", "SET", "maxmemory-policy", "noeviction"]));
    const [warning] = await store.configurationWarnings();
    expect(warning).toMatch(new RegExp(`at ${redis.primary.address} has maxmemory-policy volatile-lru: .*noeviction`));
  });
});

describe("Redis Sentinel: a primary with a lagging replica killed", () => {
  let redis: ReplicatedRedis;
  let sentinels: Sentinels;
  beforeAll(async () => {
    redis = await startReplicated(1);
    sentinels = await startSentinels(redis.primary.port, "tg", 1);
  }, 60_000);
  afterAll(async () => {
    await sentinels?.stop();
    await redis?.stop();
  });

  it("finds the primary through the sentinels, keeps every acknowledged task across the failover, and serves again within seconds", async () => {
    const open = (waitTimeoutMs: number, keyPrefix: string) =>
      cleanups.track(createStore({ sentinel: { name: "tg", nodes: sentinels.nodes }, keyPrefix, waitTimeoutMs })) as RedisStore;
    const steady = open(STEADY_MS, uniquePrefix());
    const store = open(WAIT_MS, steady.keys.prefix);
    const acknowledged = [];
    for (let i = 0; i < 10; i++) {
      const task = newTask();
      await steady.createTask(task, LEASE);
      acknowledged.push(task);
    }
    expect(store.topology.needed()).toBe(1);
    await cutReplication(redis.primary.port);
    // The sentinels still list the replica: nothing more is acknowledged while it cannot confirm.
    for (let i = 0; i < 3; i++) await expect(store.createTask(newTask(), LEASE)).rejects.toBeInstanceOf(StoreUnconfirmedError);
    await redis.primary.kill("SIGKILL");
    const sentinelPort = Number(sentinels.nodes[0]!.split(":")[1]);
    await waitFor(async () => (await primaryPortOf(sentinelPort, "tg")) === redis.replicas[0]!.port, {
      timeoutMs: 30_000,
      what: "the sentinels to promote the replica",
    });
    const after = newTask();
    await waitFor(() => steady.createTask(after, LEASE).then(() => true), { timeoutMs: 15_000, what: "a create on the new primary" });
    for (const task of [...acknowledged, after]) expect((await steady.getTask(task.id, null))?.id).toBe(task.id);
  }, 90_000);
});

describe("Redis Cluster with a replica per shard", () => {
  let cluster: RedisClusterProcess;
  let raw: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3, { replicas: 1 });
    raw = new Cluster(cluster.nodes);
    await raw.ping();
  }, 90_000);
  afterAll(async () => {
    raw?.disconnect();
    await cluster?.stop();
  });

  /** The port of the primary that serves `key` now. */
  const primaryOf = async (key: string) => {
    await new Promise<void>((resolve) => raw.refreshSlotsCache(() => resolve()));
    return Number(raw.slots[keySlot(key)]![0]!.split(":")[1]);
  };

  it("asks each primary for WAITAOF on its own, and confirms by WAIT alone each one that refuses it, warned once per primary", async () => {
    const { logger, records } = capturingLogger();
    const store = cleanups.track(
      createStore({ cluster: cluster.nodes, keyPrefix: uniquePrefix(), waitTimeoutMs: STEADY_MS, waitForAof: true, logger }),
    ) as RedisStore;
    await store.topology.firstRead;
    const primaries = [...store.confirmations().keys()].sort();
    expect(primaries).toHaveLength(3);
    // Debian's 7.0 does not know WAITAOF; a 7.2 server refuses it here as the cluster's AOF is off.
    const refusedBy = () => records.flatMap((r) => (r.level === 40 ? [/^Redis at (\S+) refused WAITAOF/.exec(r.msg)?.[1]] : [])).sort();
    for (let i = 0; i < 60 && refusedBy().length < 3; i++) await store.createTask(newTask(), LEASE);
    expect(refusedBy()).toEqual(primaries);
  });

  it("refuses a create on a shard whose replica lags, creates on the others and on a spare held set, and keeps every acknowledged task when that primary dies", async () => {
    const prefix = uniquePrefix();
    const keys = new RedisKeys(prefix);
    const open = (waitTimeoutMs: number) => cleanups.track(createStore({ cluster: cluster.nodes, keyPrefix: prefix, waitTimeoutMs })) as RedisStore;
    const steady = open(STEADY_MS);
    const store = open(WAIT_MS);
    const first = newTask();
    await steady.createTask(first, LEASE);
    const victim = await primaryOf(keys.task(first.id));
    expect(steady.topology.needed(keySlot(keys.task(first.id)))).toBe(1);
    // Each primary is asked for WAITAOF on its own (the cluster's have their AOF off: WAIT alone).
    const confirmed = () =>
      [...steady.confirmations()]
        .filter(([, c]) => !c.waitAof)
        .map(([at]) => at)
        .sort();
    expect(confirmed()).toEqual(
      raw
        .nodes("master")
        .map((n) => `${n.options.host}:${n.options.port}`)
        .sort(),
    );
    // A lease token whose held set lives on the shard that will lag.
    let token = "";
    for (let i = 0; !token; i++) if ((await primaryOf(keys.heldUnder(`tok-${i}`))) === victim) token = `tok-${i}`;
    const lease = { owner: "replica-1", token };
    const acknowledged = [first];
    for (let i = 0; i < 12; i++) {
      const task = newTask();
      await steady.createTask(task, lease);
      acknowledged.push(task);
    }
    await cutReplication(victim);
    const refused: string[] = [];
    for (let i = 0; i < 30; i++) {
      const task = newTask();
      const on = await primaryOf(keys.task(task.id));
      // Its held set is on the lagging shard: the task is listed in its spare, unless that is there too.
      const spareOn = await primaryOf(keys.heldSpare(token, shardOf(task.id, HELD_SPARES)));
      try {
        await store.createTask(task, lease);
        expect([on, spareOn]).not.toContain(victim);
        acknowledged.push(task);
      } catch (err) {
        expect(err).toBeInstanceOf(StoreUnconfirmedError);
        expect([on, spareOn]).toContain(victim);
        refused.push(task.id);
      }
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeGreaterThan(13);
    await cluster.kill(victim);
    // Taken from the read that found it: a node that has not heard of the failover yet may still name the victim.
    let promoted = "";
    await waitFor(
      async () => {
        const port = await primaryOf(keys.task(first.id));
        if (port !== victim) promoted = `127.0.0.1:${port}`;
        return port !== victim;
      },
      { timeoutMs: 30_000, what: "the cluster to promote the replica" },
    );
    await waitFor(() => confirmed().includes(promoted) && !confirmed().includes(`127.0.0.1:${victim}`), {
      timeoutMs: 15_000,
      what: "the promoted primary read",
    }).catch((err: Error) => {
      throw new Error(`${err.message}; read ${confirmed().join(", ")}, promoted ${promoted}, killed ${victim}`);
    });
    for (const task of acknowledged) {
      const found = await waitFor(() => steady.getTask(task.id, null).catch(() => undefined), { timeoutMs: 15_000, what: `task ${task.id}` });
      expect(found.id).toBe(task.id);
    }
  }, 120_000);
});
