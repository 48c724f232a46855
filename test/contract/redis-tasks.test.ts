import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/index.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { describeTaskStoreContract, newTask } from "./task-store.contract.js";

describeTaskStoreContract("redis", async () => createStore({ redisUrl: redisUrl(), keyPrefix: uniquePrefix() }));

describe("redis task store", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it("renews the leases of 200 tasks in one round trip, and keeps every key of a task in one slot", async () => {
    const prefix = uniquePrefix();
    const store = createStore({ redisUrl: redisUrl(), keyPrefix: prefix });
    const raw = new Redis(redisUrl());
    cleanups.push(() => store.close(), () => raw.quit());
    const tasks = await Promise.all(Array.from({ length: 200 }, () => store.createTask(newTask(), { owner: "r", token: "tok", leaseMs: 10_000 })));
    const keys = await raw.keys(`${prefix}{t:${tasks[0]!.id}}*`);
    expect(keys.sort()).toEqual([`${prefix}{t:${tasks[0]!.id}}`, `${prefix}{t:${tasks[0]!.id}}:lease`]);
    const slots = await Promise.all(keys.map((k) => raw.call("CLUSTER", "KEYSLOT", k).catch(() => null)));
    if (slots[0] !== null) expect(new Set(slots).size).toBe(1);
    // One round trip = one write to the socket: an ioredis pipeline is flushed in a single write,
    // while one request per task would show 200 of them.
    const client = (store as unknown as { connection: { client: { stream: { write: (...a: unknown[]) => boolean } } } }).connection.client;
    let writes = 0;
    const original = client.stream.write.bind(client.stream);
    client.stream.write = (...args: unknown[]) => ((writes += 1), original(...args));
    const states = await store.renewLeases(tasks.map((t) => ({ taskId: t.id, token: "tok" })), 10_000);
    client.stream.write = original;
    expect(states.every((s) => s.held)).toBe(true);
    expect(writes).toBe(1);
  });
});
