import { execFileSync } from "node:child_process";
import type { Logger } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnconfirmedError } from "../../src/store/contract.js";
import { createStore } from "../../src/store/index.js";
import type { WaitForAof } from "../../src/store/redis/aof-confirm.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { capturingLogger, type LogRecord } from "../fixtures/upstreams.js";
import { useCleanups } from "../helpers/cleanups.js";
import { command, cutReplication, onlineReplicas, startReplicated, type ReplicatedRedis } from "../helpers/redis-ha.js";
import { uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { LEASE, newTask } from "./task-store.contract.js";

const cleanups = useCleanups();
/** WAITAOF came with Redis 7.2 (https://redis.io/docs/latest/commands/waitaof/); Debian 12's is 7.0. */
const VERSION = /v=(\d+)\.(\d+)/.exec(execFileSync("redis-server", ["--version"], { encoding: "utf8" }));
const HAS_WAITAOF = Number(VERSION?.[1]) > 7 || (Number(VERSION?.[1]) === 7 && Number(VERSION?.[2]) >= 2);

/** The messages logged at warn level. */
const warnings = (records: LogRecord[]) => records.filter((r) => r.level === 40).map((r) => r.msg);

describe("acknowledged writes on a primary with its AOF on and a replica (WAIT, WAITAOF where the server has it)", () => {
  let redis: ReplicatedRedis;
  beforeAll(async () => {
    redis = await startReplicated(1);
    // The primary's AOF only: the replica's would share its directory (appenddirname is fixed at start).
    await command(redis.primary.port, ["CONFIG", "SET", "appendonly", "yes"]);
  }, 60_000);
  afterAll(async () => redis?.stop());

  const open = (opts: { waitForAof?: WaitForAof; waitForReplicas?: number; waitTimeoutMs?: number; logger?: Logger } = {}) =>
    cleanups.track(createStore({ redisUrl: redis.primary.url, keyPrefix: uniquePrefix(), waitTimeoutMs: 10_000, ...opts })) as RedisStore;

  it("says per primary, in a property and a log line at start, which confirmation it uses, and confirms by WAIT where the server has no WAITAOF", async () => {
    const { logger, records } = capturingLogger();
    const store = open({ logger });
    await store.topology.firstRead;
    const confirmation = store.confirmations().get("");
    if (HAS_WAITAOF) {
      expect(confirmation).toEqual({ waitAof: true, reason: expect.stringMatching(/, its AOF on$/) });
    } else {
      expect(confirmation).toEqual({ waitAof: false, reason: expect.stringMatching(/^redis_version 7\.[01]\.\d+ has no WAITAOF \(7\.2 and later\)$/) });
      expect(records.map((r) => r.msg)).toContainEqual(
        expect.stringMatching(/^acknowledged writes to the primary are confirmed by WAIT: redis_version 7\.[01]/),
      );
    }
    const task = newTask();
    await store.createTask(task, LEASE);
    expect(await command(redis.replicas[0]!.port, ["EXISTS", store.keys.task(task.id)])).toBe(1);
    // WAIT still counts the replica: cut off, it confirms nothing, and the error says what was missing.
    const cut = open({ waitTimeoutMs: 300 });
    await cut.topology.firstRead;
    const restore = await cutReplication(redis.primary.port);
    cleanups.defer(restore);
    const refused = await cut.createTask(newTask(), LEASE).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StoreUnconfirmedError);
    expect((refused as StoreUnconfirmedError).missing).toBe("replicas");
    expect(String((refused as Error).cause)).toMatch(/0 of 1 replicas acknowledged the write within 300 ms/);
    await restore();
    await waitFor(async () => (await onlineReplicas(redis.primary.port)) === 1, { timeoutMs: 15_000, what: "the replica in sync again" });
  });

  it("reads each primary with a fixed store.waitForReplicas too, and not at all with store.waitForAof false", async () => {
    const fixed = open({ waitForReplicas: 1 });
    await fixed.topology.firstRead;
    expect(fixed.confirmations().get("")?.waitAof).toBe(HAS_WAITAOF);
    const off = open({ waitForAof: false });
    await off.topology.firstRead;
    expect(off.confirmations().size).toBe(0);
    await off.createTask(newTask(), LEASE);
  });

  it("acknowledges writes a primary refused WAITAOF for by WAIT alone, warns once, and asks again after the next topology read", async () => {
    if (HAS_WAITAOF) {
      // A server with WAITAOF refuses it only without its AOF: "numlocal is set but appendonly is disabled".
      await command(redis.primary.port, ["CONFIG", "SET", "appendonly", "no"]);
      cleanups.defer(() => command(redis.primary.port, ["CONFIG", "SET", "appendonly", "yes"]));
    }
    const { logger, records } = capturingLogger();
    const store = open({ waitForAof: true, logger });
    await store.topology.firstRead;
    expect(store.confirmations().get("")).toEqual({ waitAof: true, reason: "store.waitForAof is true" });
    expect(store.topology.needed()).toBe(1);
    // Error replies the primary sent: a refused WAITAOF is one (a topology read may flip the property back at any time).
    const errorReplies = async () => Number(/^errorstat_ERR:count=(\d+)/m.exec(String(await command(redis.primary.port, ["INFO", "errorstats"])))?.[1] ?? 0);
    const before = await errorReplies();
    const first = newTask();
    await store.createTask(first, LEASE);
    expect(await command(redis.replicas[0]!.port, ["EXISTS", store.keys.task(first.id)])).toBe(1);
    expect(await errorReplies()).toBeGreaterThan(before);
    for (let i = 0; i < 3; i++) await store.createTask(newTask(), LEASE);
    // The next read asks WAITAOF again; refused again, the write is still acknowledged, and not warned of twice.
    await waitFor(() => store.confirmations().get("")?.waitAof === true, { timeoutMs: 15_000, what: "the next topology read" });
    const asked = await errorReplies();
    const again = newTask();
    await store.createTask(again, LEASE);
    expect(await errorReplies()).toBeGreaterThan(asked);
    expect((await store.getTask(again.id, null))?.id).toBe(again.id);
    const refusal = HAS_WAITAOF ? /appendonly is disabled/ : /unknown command 'WAITAOF'/;
    expect(warnings(records)).toEqual([
      expect.stringMatching(
        new RegExp(`^Redis at the primary refused WAITAOF \\(.*${refusal.source}.*\\): its acknowledged writes are confirmed by WAIT alone`, "i"),
      ),
    ]);
  });
});
