import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimOf, STORE_FORMAT } from "../../src/store/format.js";
import { checkStoreFormat } from "../../src/store/format-check.js";
import { createStore } from "../../src/store/index.js";
import { RedisKeys } from "../../src/store/redis/keys.js";
import { startRedisCluster, type RedisClusterProcess } from "../helpers/redis-cluster.js";
import { uniquePrefix } from "../helpers/redis.js";
import { describeStoreContract } from "./store.contract.js";
import { LEASE, newTask } from "./task-store.contract.js";

let cluster: RedisClusterProcess;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 60_000);
afterAll(async () => cluster?.stop());

// The same suite the single server and memory pass, on a real 3-master cluster.
describeStoreContract("redis cluster", async () => createStore({ cluster: cluster.nodes, keyPrefix: uniquePrefix() }));

describe("redis cluster layout", () => {
  it("spreads tasks over the masters, each task's keys in one slot", async () => {
    const prefix = uniquePrefix();
    const store = createStore({ cluster: cluster.nodes, keyPrefix: prefix });
    const raw = new Cluster(cluster.nodes);
    try {
      const tasks = Array.from({ length: 30 }, () => newTask());
      for (const task of tasks) await store.createTask(task, LEASE);
      const keys = new RedisKeys(prefix);
      const slotOf = async (key: string) => Number(await raw.call("CLUSTER", "KEYSLOT", key));
      const slots = new Set<number>();
      for (const task of tasks) {
        const k = keys.taskKeys(task.id);
        const mine = await Promise.all([k.hash, k.outcome, k.lease].map(slotOf));
        expect(new Set(mine).size).toBe(1);
        slots.add(mine[0]!);
      }
      const masters = raw.nodes("master").length;
      expect(masters).toBe(3);
      expect(slots.size).toBeGreaterThan(1);
      // Writes of many tasks at once still answer per task, across nodes.
      const results = await store.transitionTasks(
        tasks.map((t) => ({ id: t.id, change: { kind: "set-status-message", statusMessage: "s", leaseToken: LEASE.token, now: Date.now() } })),
      );
      expect(results.every((r) => !(r instanceof Error) && r.ok)).toBe(true);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});

describe("redis cluster: the store format", () => {
  it("records the format and finds format 1's running tasks across the slots of its index", async () => {
    const prefix = uniquePrefix();
    const store = createStore({ cluster: cluster.nodes, keyPrefix: prefix });
    const raw = new Cluster(cluster.nodes);
    try {
      const format = store.format!;
      const claim = claimOf("9.9.9");
      expect(await checkStoreFormat(format, claim)).toMatchObject({ format: STORE_FORMAT });
      // What a replica of format 1 leaves: the task hash, its id in one of the live index's shards (each its own slot).
      for (const n of [2, 11]) {
        await raw.hset(`${prefix}{t:01RUNNING${n}}`, { status: "working" });
        await raw.zadd(`${prefix}{live:${n}}`, 1, `01RUNNING${n}`);
      }
      expect(await format.unrecordedTasks(100)).toBe(2);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});
