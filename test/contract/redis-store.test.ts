import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { createStore } from "../../src/store/index.js";
import { RedisStore } from "../../src/store/redis/redis-store.js";
import { useCleanups } from "../helpers/cleanups.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { describeStoreContract, sessionRecord } from "./store.contract.js";
import { LEASE, newTask } from "./task-store.contract.js";

describeStoreContract("redis", async () => createStore({ redisUrl: redisUrl(), keyPrefix: uniquePrefix() }));

describe("redis store", () => {
  const { track, defer } = useCleanups();

  it("keeps a session under the configured prefix, in its own hash tag", async () => {
    const prefix = uniquePrefix();
    const store = track(createStore({ redisUrl: redisUrl(), keyPrefix: prefix }));
    expect(store.kind).toBe("redis");
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    const record = sessionRecord();
    await store.createSession(record, 60_000);
    expect(await raw.keys(`${prefix}*`)).toEqual([`${prefix}{s:${record.id}}`]);
    const ttlMs = await raw.pttl(`${prefix}{s:${record.id}}`);
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(60_000);
  });

  it("keeps an outcome no longer than its task's shortened life, shortened by the ending or earlier", async () => {
    const prefix = uniquePrefix();
    const store = track(new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix }));
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    const fence = { leaseToken: LEASE.token, now: Date.now() };
    const ttlMs = 120_000;
    const byEnding = await store.createTask(newTask({ createdAt: Date.now() - 60_000, ttlMs: 600_000 }), LEASE);
    await store.transitionTask(byEnding.id, { kind: "complete", outcome: { result: { content: [] } }, ttlMs, ...fence });
    const earlier = await store.createTask(newTask({ createdAt: Date.now() - 60_000, ttlMs: 600_000 }), LEASE);
    await store.transitionTask(earlier.id, { kind: "bind-upstream-task", upstreamTask: { taskId: "up-out" }, ttlMs, ...fence });
    await store.transitionTask(earlier.id, { kind: "complete", outcome: { result: { content: [] } }, ...fence });
    for (const { id } of [byEnding, earlier]) {
      const [task, outcome] = await Promise.all([raw.pttl(store.keys.task(id)), raw.pttl(store.keys.taskOutcome(id))]);
      // Both expire at createdAt + ttlMs, about 60 s from now (not 540 s).
      expect(task).toBeGreaterThan(0);
      expect(task).toBeLessThanOrEqual(60_000);
      expect(outcome).toBeGreaterThan(0);
      expect(outcome).toBeLessThanOrEqual(task);
    }
  });

  it("refuses a key prefix with braces, which would put every key in one slot", () => {
    expect(() => new RedisStore({ target: { url: redisUrl() }, keyPrefix: "a{b}:" })).toThrow(RangeError);
  });
});

describe("redis store: the tasks held under a lease", () => {
  it("pages through a lapsed lease's tasks, so orphans behind pages of ended ones are found, and forgets the lease once empty", async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix, orphanPageSize: 3 });
    const raw = new Redis(redisUrl());
    try {
      const lease = { owner: "gone", token: "paged" };
      await store.renewReplicaLease(lease.token, 60_000, true);
      const tasks = [];
      for (let i = 0; i < 10; i++) tasks.push(await store.createTask(newTask(), lease));
      const orphans = tasks.slice(7);
      for (const ended of tasks.slice(0, 7))
        await store.transitionTask(ended.id, { kind: "complete", outcome: { result: {} }, leaseToken: lease.token, now: Date.now() });
      // The ends leave the set in a batch of their own, after the writes.
      await waitFor(async () => (await raw.scard(store.keys.heldUnder(lease.token))) === 3, { timeoutMs: 5_000, what: "ended tasks to leave the set" });
      // Put them back, as if those batches were lost: the reaper's pages must skip them.
      await raw.sadd(store.keys.heldUnder(lease.token), ...tasks.slice(0, 7).map((t) => t.id), "never-written");
      await store.endReplicaLease(lease.token);
      // Not settled yet: the id whose task was never written stays (its create may still land).
      const found = await store.findOrphans(10, 60_000);
      expect(found.map((o) => o.task.id).sort()).toEqual(orphans.map((t) => t.id).sort());
      expect((await raw.smembers(store.keys.heldUnder(lease.token))).sort()).toEqual([...orphans.map((t) => t.id), "never-written"].sort());
      for (const orphan of found) await store.reapTask(orphan, { to: "failed", statusMessage: "gone", now: Date.now() });
      expect(await store.findOrphans(10, 0)).toEqual([]);
      expect(await raw.exists(store.keys.heldUnder(lease.token))).toBe(0);
      expect(await raw.zscore(store.keys.leases(), lease.token)).toBeNull();
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});

describe("redis store: the operators' index", () => {
  const { track, defer } = useCleanups();

  it("is sharded, and lists every shard merged in one order, page after page", async () => {
    const prefix = uniquePrefix();
    const store = track(new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix }));
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    const upstream = `up-${prefix}`;
    // Expiries in a few distinct values, several tasks sharing each: ties go by id, highest first.
    const base = Date.now();
    const tasks = Array.from({ length: 40 }, (_, i) => newTask({ upstream, createdAt: base + (i % 5) }));
    for (const task of tasks) await store.createTask(task, LEASE);
    const expected = [...tasks].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((t) => t.id);
    const shards = await raw.keys(`${prefix}{all*`);
    expect(shards.length).toBeGreaterThan(1);
    expect(shards.every((key) => /\{all:\d+\}:tasks$/.test(key))).toBe(true);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listAllTasks({ upstream }, { limit: 7, cursor });
      if (!page) throw new Error("a cursor the store gave was refused");
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(expected);
  });

  it("drops the entry of a task that is gone, and still lists the rest in order", async () => {
    const prefix = uniquePrefix();
    const store = track(new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix }));
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    const tasks = Array.from({ length: 6 }, (_, i) => newTask({ createdAt: Date.now() + i }));
    for (const task of tasks) await store.createTask(task, LEASE);
    const gone = tasks[2] as (typeof tasks)[number];
    await raw.del(store.keys.task(gone.id));
    const listed = await store.listAllTasks({}, { limit: 10 });
    expect(listed?.tasks.map((t) => t.id)).toEqual(
      tasks
        .filter((t) => t !== gone)
        .reverse()
        .map((t) => t.id),
    );
    expect(await raw.zscore(store.keys.allTasksShardOf(gone.id), gone.id)).toBeNull();
  });
});
