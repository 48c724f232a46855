import { Redis } from "ioredis";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/index.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl, startRedis, uniquePrefix } from "../helpers/redis.js";
import { keySlot } from "../../src/store/redis/key-slot.js";
import { LEASE, newTask } from "./task-store.contract.js";

let prefix: string;
let store: RedisStore;
let raw: Redis;
beforeEach(() => {
  prefix = uniquePrefix();
  store = createStore({ redisUrl: redisUrl(), keyPrefix: prefix }) as RedisStore;
  raw = new Redis(redisUrl());
});
/**
 * Writes to the socket of the store's own Redis client, the one under test: one round trip is one
 * write (a pipeline is flushed in one), and no other connection of the process counts.
 */
function storeWrites() {
  const client = store["connection"].client as Redis;
  return vi.spyOn(client.stream, "write");
}

afterEach(async () => {
  vi.restoreAllMocks();
  await store.close();
  await raw.quit();
});

it("computes cluster key slots as Redis does", () => {
  // Vectors from the cluster specification and `CLUSTER KEYSLOT` on a cluster node.
  expect(keySlot("123456789")).toBe(0x31c3);
  expect(keySlot("foo")).toBe(12182);
  expect(keySlot("{user1000}.following")).toBe(keySlot("{user1000}.followers"));
  expect(keySlot("{}foo")).not.toBe(keySlot("{}bar"));
});

it("keeps every key of a task in one cluster slot", async () => {
  const { id } = await store.createTask(newTask(), LEASE);
  await store.transitionTask(id, { kind: "complete", outcome: { result: {} }, now: Date.now() });
  const keys = (await raw.keys(`${prefix}{t:*`)).sort();
  expect(keys).toEqual([`${prefix}{t:${id}}`, `${prefix}{t:${id}}:lease`, `${prefix}{t:${id}}:out`]);
  expect(new Set(keys.map(keySlot)).size).toBe(1);
  expect(keySlot(`${prefix}{t:${id}}`)).not.toBe(keySlot(`${prefix}{t:${id}x}`));
});

it("stores client JSON untouched, one hash field per input request and answer", async () => {
  const task = newTask();
  await store.createTask(task, LEASE);
  const request = { method: "elicitation/create", params: { message: "?", requestedSchema: { type: "object", properties: {} }, big: 2 ** 60 } };
  await store.transitionTask(task.id, { kind: "start-input", addInputRequests: { k1: request }, now: Date.now() });
  await store.addInputResponses(task.id, "alice", { k1: { content: {}, list: [] } }, Date.now());
  const outcome = { result: { content: [], structuredContent: { empty: {}, list: [[]] } } };
  await store.transitionTask(task.id, { kind: "complete", outcome, now: Date.now() });
  const hash = await raw.hgetall(store.keys.task(task.id));
  expect(hash["in:k1"]).toBe(JSON.stringify(request));
  expect(hash["ans:k1"]).toBe('{"content":{},"list":[]}');
  expect(await raw.get(store.keys.taskOutcome(task.id))).toBe(JSON.stringify(outcome));
});

it("lets Redis expire every key of a task at createdAt + ttlMs, the key naming its lease with it", async () => {
  const task = newTask({ createdAt: Date.now() - 1_000, ttlMs: 120_000 });
  await store.createTask(task, LEASE);
  await store.transitionTask(task.id, { kind: "fail", outcome: { error: { code: 1, message: "x" } }, now: Date.now() });
  for (const key of [store.keys.task(task.id), store.keys.taskOutcome(task.id), store.keys.taskLease(task.id)]) {
    expect(await raw.call("PEXPIRETIME", key), key).toBe(task.createdAt + task.ttlMs);
  }
});

it("writes the outcomes of 200 tasks in one round trip", async () => {
  const tasks = await Promise.all(Array.from({ length: 200 }, () => store.createTask(newTask(), LEASE)));
  // One round trip is one write to a socket: a pipeline is flushed in a single write, where one
  // request per task would make 200 of them.
  const writes = storeWrites();
  const results = await store.transitionTasks(
    tasks.map((t) => ({ id: t.id, change: { kind: "complete", outcome: { result: {} }, leaseToken: LEASE.token, now: Date.now() } })),
  );
  expect(writes).toHaveBeenCalledTimes(1);
  expect(results.map((r) => !(r instanceof Error) && r.ok && r.task.status)).toEqual(tasks.map(() => "completed"));
});

/** Commands a Redis ran in all, from INFO commandstats. */
/** Commands the server ran, INFO aside: the counter's own, and the store's topology read every 2 s (replicas.ts), held tasks or not. */
async function commandsRun(client: Redis): Promise<number> {
  const info = await client.info("commandstats");
  return [...info.matchAll(/^cmdstat_(?!info:)[^:]+:calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

it("costs the store the same at rest for 20 or 2,000 held tasks: one renewal, one sweep", async () => {
  // A Redis of its own: the commands counted are this store's alone.
  const own = await startRedis();
  const alone = createStore({ redisUrl: own.url, keyPrefix: prefix }) as RedisStore;
  const counter = new Redis(own.url);
  try {
    const costAtRest = async (held: number) => {
      const lease = { owner: "replica-1", token: `rest-${held}` };
      await alone.renewReplicaLease(lease.token, 10_000, true);
      for (let i = 0; i < held; i += 200) await Promise.all(Array.from({ length: Math.min(200, held - i) }, () => alone.createTask(newTask(), lease)));
      const before = await commandsRun(counter);
      expect(await alone.renewReplicaLease(lease.token, 10_000)).toBe(true);
      expect(await alone.takeFlagged("replica-1", 1_000)).toEqual([]);
      expect(await alone.findOrphans(500, 10_000)).toEqual([]);
      return (await commandsRun(counter)) - before;
    };
    const few = await costAtRest(20);
    const many = await costAtRest(2_000);
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(3 * 4);
  } finally {
    counter.disconnect();
    await alone.close();
    await own.stop();
  }
});

it("reads one task in one round trip", async () => {
  const { id } = await store.createTask(newTask(), LEASE);
  const writes = storeWrites();
  expect(await store.getTask(id, "alice")).toBeDefined();
  expect(writes).toHaveBeenCalledTimes(1);
});

it("keeps working after the server forgot its scripts (SCRIPT FLUSH, or a restart)", async () => {
  const { id } = await store.createTask(newTask(), LEASE);
  const more = await Promise.all([0, 1, 2].map(() => store.createTask(newTask(), LEASE)));
  for (const step of ["read", "renew", "batch", "change"] as const) {
    await raw.script("FLUSH");
    if (step === "read") expect(await store.getTask(id, "alice")).toMatchObject({ id, revision: 1 });
    if (step === "renew") expect(await store.renewReplicaLease(LEASE.token, 10_000, true)).toBe(true);
    if (step === "batch") {
      const results = await store.transitionTasks(
        [id, ...more.map((t) => t.id)].map((taskId) => ({
          id: taskId,
          change: { kind: "set-status-message", statusMessage: "s", leaseToken: LEASE.token, now: Date.now() },
        })),
      );
      expect(results.map((r) => !(r instanceof Error) && r.ok)).toEqual([true, true, true, true]);
    }
    if (step === "change")
      expect(await store.transitionTask(id, { kind: "set-status-message", statusMessage: "on", now: Date.now() })).toMatchObject({ ok: true });
  }
});
