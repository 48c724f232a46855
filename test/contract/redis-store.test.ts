import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract.js";
import { createStore } from "../../src/store/index.js";
import { RedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { describeStoreContract, sessionRecord } from "./store.contract.js";

describeStoreContract("redis", async () => createStore({ redisUrl: redisUrl(), keyPrefix: uniquePrefix() }));

describe("redis store", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  function track<T extends Store>(store: T): T {
    cleanups.push(() => store.close());
    return store;
  }

  it("keeps a session under the configured prefix, in its own hash tag", async () => {
    const prefix = uniquePrefix();
    const store = track(createStore({ redisUrl: redisUrl(), keyPrefix: prefix }));
    expect(store.kind).toBe("redis");
    const raw = new Redis(redisUrl());
    cleanups.push(() => raw.quit());
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
