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

  it("refuses a key prefix with braces, which would put every key in one slot", () => {
    expect(() => new RedisStore({ target: { url: redisUrl() }, keyPrefix: "a{b}:" })).toThrow(RangeError);
  });
});

describe("redis store: the reaper's live index", () => {
  it("pages through a shard, so an orphan behind a page of live tasks is still found", async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix, orphanPageSize: 3 });
    try {
      // Every task in one shard: ids chosen by the shard their hash lands in.
      const shard = store.keys.liveShardOf("anchor");
      const inShard = () => {
        for (;;) {
          const task = newTask();
          if (store.keys.liveShardOf(task.id) === shard) return task;
        }
      };
      const createdAt = Date.now() - 1_000;
      for (let i = 0; i < 7; i++) await store.createTask({ ...inShard(), createdAt: createdAt + i }, { ...LEASE, token: `live-${i}` });
      const orphan = { ...inShard(), createdAt: createdAt + 10 };
      await store.createTask(orphan, { owner: "gone", token: "short", leaseMs: 100 });
      const found = await waitFor(async () => (await store.findOrphans(Date.now(), 10)).find((t) => t.id === orphan.id), {
        timeoutMs: 5_000,
        what: "the orphan",
      });
      expect(found.id).toBe(orphan.id);
    } finally {
      await store.close();
    }
  });
});

describe("redis store: the operators' index", () => {
  const { track, defer } = useCleanups();

  it("is sharded like the live index, and lists every shard merged in one order, page after page", async () => {
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
