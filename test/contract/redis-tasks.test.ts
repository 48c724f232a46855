import { Socket } from "node:net";
import { Redis } from "ioredis";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/index.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { keySlot } from "./key-slot.js";
import { LEASE, newTask } from "./task-store.contract.js";

let prefix: string;
let store: RedisStore;
let raw: Redis;
beforeEach(() => {
  prefix = uniquePrefix();
  store = createStore({ redisUrl: redisUrl(), keyPrefix: prefix }) as RedisStore;
  raw = new Redis(redisUrl());
});
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

it("lets Redis expire every key of a task at createdAt + ttlMs, and the lease after leaseMs", async () => {
  const task = newTask({ createdAt: Date.now() - 1_000, ttlMs: 120_000 });
  await store.createTask(task, { ...LEASE, leaseMs: 7_000 });
  await store.transitionTask(task.id, { kind: "fail", outcome: { error: { code: 1, message: "x" } }, now: Date.now() });
  for (const key of [store.keys.task(task.id), store.keys.taskOutcome(task.id)]) {
    expect(await raw.call("PEXPIRETIME", key), key).toBe(task.createdAt + task.ttlMs);
  }
  const leaseTtlMs = await raw.pttl(store.keys.taskLease(task.id));
  expect(leaseTtlMs).toBeGreaterThan(0);
  expect(leaseTtlMs).toBeLessThanOrEqual(7_000);
});

it("renews the leases of 200 tasks in one round trip", async () => {
  const tasks = await Promise.all(Array.from({ length: 200 }, () => store.createTask(newTask(), LEASE)));
  // One round trip is one write to a socket: a pipeline is flushed in a single write, where one
  // request per task would make 200 of them.
  const writes = vi.spyOn(Socket.prototype, "write");
  const states = await store.renewLeases(
    tasks.map((t) => ({ taskId: t.id, token: LEASE.token })),
    10_000,
  );
  expect(writes).toHaveBeenCalledTimes(1);
  expect(states.map((s) => s.held)).toEqual(tasks.map(() => true));
});

it("reads one task in one round trip", async () => {
  const { id } = await store.createTask(newTask(), LEASE);
  const writes = vi.spyOn(Socket.prototype, "write");
  expect(await store.getTask(id, "alice")).toBeDefined();
  expect(writes).toHaveBeenCalledTimes(1);
});

it("keeps working after the server forgot its scripts (SCRIPT FLUSH, or a restart)", async () => {
  const { id } = await store.createTask(newTask(), LEASE);
  const more = await Promise.all([0, 1, 2].map(() => store.createTask(newTask(), LEASE)));
  for (const step of ["read", "renew", "change"] as const) {
    await raw.script("FLUSH");
    if (step === "read") expect(await store.getTask(id, "alice")).toMatchObject({ id, revision: 1 });
    if (step === "renew") {
      const states = await store.renewLeases(
        [id, ...more.map((t) => t.id)].map((taskId) => ({ taskId, token: LEASE.token })),
        10_000,
      );
      expect(states.map((s) => s.held)).toEqual([true, true, true, true]);
    }
    if (step === "change")
      expect(await store.transitionTask(id, { kind: "set-status-message", statusMessage: "on", now: Date.now() })).toMatchObject({ ok: true });
  }
});
