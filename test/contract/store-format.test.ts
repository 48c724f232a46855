import { Redis } from "ioredis";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { claimOf, OLDEST_WORKING_FORMAT, STORE_FORMAT, StoreFormatError } from "../../src/store/format.js";
import { checkStoreFormat, FormatWatch } from "../../src/store/format-check.js";
import { RedisStore } from "../../src/store/redis/redis-store.js";
import { useCleanups } from "../helpers/cleanups.js";
import { inProcessGateway } from "../helpers/in-process.js";
import { WITH_TASKS } from "../helpers/modern.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";

const CLAIM = claimOf("9.9.9");

describe("the store format", () => {
  const { track, defer } = useCleanups();
  const open = () => {
    const prefix = uniquePrefix();
    const store = track(new RedisStore({ target: { url: redisUrl() }, keyPrefix: prefix }));
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    return { prefix, store, raw, format: store.format };
  };

  it("is recorded by the first replica on an empty store, and kept by the next of the same format", async () => {
    const { prefix, raw, format } = open();
    expect(await format.read()).toBeUndefined();
    expect(await checkStoreFormat(format, CLAIM)).toEqual({ format: STORE_FORMAT, oldest: OLDEST_WORKING_FORMAT, version: "9.9.9" });
    expect(await raw.hgetall(`${prefix}{format}`)).toEqual({ format: String(STORE_FORMAT), oldest: String(OLDEST_WORKING_FORMAT), version: "9.9.9" });
    expect(await checkStoreFormat(format, claimOf("9.9.10"))).toMatchObject({ format: STORE_FORMAT, version: "9.9.9" });
  });

  it("refuses to start an older replica on a store a newer version moved past it, naming both formats and what to do", async () => {
    const { prefix, raw, format } = open();
    await raw.hset(`${prefix}{format}`, { format: STORE_FORMAT + 1, oldest: STORE_FORMAT + 1, version: "10.0.0" });
    const refused = checkStoreFormat(format, CLAIM);
    await expect(refused).rejects.toBeInstanceOf(StoreFormatError);
    await expect(refused).rejects.toThrow(
      `the store is in format ${STORE_FORMAT + 1} (raised by taskgate 10.0.0), which replicas of format ${STORE_FORMAT + 1} or later may use; this replica (taskgate 9.9.9) writes store format ${STORE_FORMAT}. Roll this replica forward to taskgate 10.0.0 or later`,
    );
    expect(await raw.hget(`${prefix}{format}`, "format")).toBe(String(STORE_FORMAT + 1));
  });

  it("lets an older replica work beside a newer format that says it keeps it working, and never lowers the format", async () => {
    const { prefix, raw, format } = open();
    await raw.hset(`${prefix}{format}`, { format: STORE_FORMAT + 1, oldest: STORE_FORMAT, version: "10.0.0" });
    expect(await checkStoreFormat(format, CLAIM)).toEqual({ format: STORE_FORMAT + 1, oldest: STORE_FORMAT, version: "10.0.0" });
  });

  it("refuses to start a newer replica on a format older than it works beside, leaving the record alone", async () => {
    const { prefix, raw, format } = open();
    await raw.hset(`${prefix}{format}`, { format: OLDEST_WORKING_FORMAT - 1, oldest: OLDEST_WORKING_FORMAT - 1, version: "0.0.1" });
    await expect(checkStoreFormat(format, CLAIM)).rejects.toThrow(
      `the store is in format ${OLDEST_WORKING_FORMAT - 1} (raised by taskgate 0.0.1); this replica (taskgate 9.9.9) writes store format ${STORE_FORMAT} and works beside format ${OLDEST_WORKING_FORMAT} or later only`,
    );
    expect(await raw.hget(`${prefix}{format}`, "format")).toBe(String(OLDEST_WORKING_FORMAT - 1));
  });

  it("refuses to start beside running tasks of format 1, which recorded no format, and ignores the ones that ended", async () => {
    const { prefix, raw, format } = open();
    // What a replica of format 1 leaves: the task hash, and its id in a shard of the live index.
    await raw.hset(`${prefix}{t:01ENDED}`, { status: "completed" });
    await raw.zadd(`${prefix}{live:3}`, 1, "01ENDED");
    expect(await format.unrecordedTasks(100)).toBe(0);
    await raw.hset(`${prefix}{t:01RUNNING}`, { status: "working" });
    await raw.zadd(`${prefix}{live:7}`, 2, "01RUNNING");
    await expect(checkStoreFormat(format, CLAIM)).rejects.toThrow(
      `the store (key prefix ${prefix}) holds 1 running task of store format 1 (taskgate built before the lease per replica), which cannot run beside this replica (taskgate 9.9.9, format ${STORE_FORMAT})`,
    );
    expect(await format.read()).toBeUndefined();
  });

  it("has a serving replica refuse calls while a replica of format 1 runs tasks beside it, and take them again once they ended", async () => {
    const { prefix, raw, store } = open();
    await checkStoreFormat(store.format, CLAIM);
    const watch = new FormatWatch(store.format, CLAIM, pino({ level: "silent" }));
    await watch.check();
    expect(watch.refusal).toBeUndefined();
    await raw.hset(`${prefix}{t:01RUNNING}`, { status: "input_required" });
    await raw.zadd(`${prefix}{live:0}`, 1, "01RUNNING");
    await watch.check();
    expect(watch.refusal).toContain("holds 1 running task of store format 1");
    await raw.hset(`${prefix}{t:01RUNNING}`, { status: "cancelled" });
    await watch.check();
    expect(watch.refusal).toBeUndefined();
  });

  it("has a serving replica stop taking calls once a newer version moved the format past it", async () => {
    const { prefix, raw, store } = open();
    const gateway = track(
      await inProcessGateway(
        {
          tasks: { leaseMs: 600 },
          upstreams: [{ name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" }, tools: { sleep: { taskSupport: "required" } } }],
        },
        { store },
      ),
    );
    const call = () => gateway.modern("tools/call", { name: "sleep", arguments: { seconds: 0 } }, { capabilities: WITH_TASKS });
    expect((await call()).body.result.resultType).toBe("task");
    await raw.hset(`${prefix}{format}`, { format: STORE_FORMAT + 1, oldest: STORE_FORMAT + 1, version: "10.0.0" });
    const watch = new FormatWatch(store.format, CLAIM, pino({ level: "silent" }));
    await watch.check();
    expect(watch.refusal).toContain(`the store is in format ${STORE_FORMAT + 1}`);
    // The gateway's own watch reads every leaseMs; its readiness and new tasks say why.
    await expect.poll(async () => (await gateway.request("/readyz")).status, { timeout: 20_000, interval: 200 }).toBe(503);
    const refused = await call();
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: -32603, message: expect.stringContaining("cannot work with the task store's format") });
  });
});
