import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/store/contract.js";
import { createStore } from "../../src/store/index.js";
import { useCleanups } from "../helpers/cleanups.js";
import { startRedis, uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { sessionRecord } from "./store.contract.js";
import { newTask } from "./task-store.contract.js";

/**
 * A store call gives up at its deadline (1 s by default), not at ioredis' own retries (which
 * would replay the command minutes later). The bound leaves slack for a loaded machine's event
 * loop; a hang would overshoot it by far.
 */
const WITHIN_DEADLINE_MS = 2_500;

/** `promise`, or a plain Error once `ms` pass first: a store call must settle by its deadline, not hang. */
function byDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer!: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Each test here runs its own redis-server, so it can stop and restart it. */
describe("redis store when Redis goes away", () => {
  const { track, defer } = useCleanups();

  it("rejects quickly while Redis is down and recovers by itself when it is back", async () => {
    const redis = track(await startRedis());
    const store = track(createStore({ redisUrl: redis.url, keyPrefix: uniquePrefix() }));
    const received: string[] = [];
    await store.bus.subscribe("owner", (m) => received.push(m));
    await store.createSession(sessionRecord(), 60_000);

    await redis.stop();
    await expect(byDeadline(store.getSession("any", 60_000), WITHIN_DEADLINE_MS)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping(300)).rejects.toBeInstanceOf(StoreUnavailableError);

    track(await startRedis({ port: redis.port }));
    await waitFor(() => store.ping(500).then(() => true), { timeoutMs: 10_000, what: "store to reconnect" });
    const record = sessionRecord();
    await store.createSession(record, 60_000);
    expect(await store.getSession(record.id, 60_000)).toEqual(record);
    // The subscription comes back too; what was published while it was away is lost (a hint).
    await waitFor(async () => (await store.bus.publish("owner", "back"), received.includes("back")), {
      timeoutMs: 10_000,
      what: "subscription to resume",
    });
  });

  it("fails every write of a batch in flight as unavailable when Redis crashes under it, so the writer retries", async () => {
    const redis = track(await startRedis());
    const store = track(createStore({ redisUrl: redis.url, keyPrefix: uniquePrefix() }));
    const lease = { owner: "replica-1", token: "crash" };
    await store.renewReplicaLease(lease.token, 60_000, true);
    const ids = await Promise.all([0, 1, 2].map(() => store.createTask(newTask(), lease).then((t) => t.id)));
    // The server holds the batch unanswered until it is killed: the pipeline is on the wire when the connection drops.
    const pauser = new Redis(redis.url);
    defer(() => pauser.disconnect());
    await pauser.call("CLIENT", "PAUSE", "5000", "ALL");
    const written = store.transitionTasks(
      ids.map((id) => ({ id, change: { kind: "complete", outcome: { result: {} }, leaseToken: lease.token, now: Date.now() } })),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await redis.stop("SIGKILL");
    const outcome = await byDeadline(
      written.then(
        (results) => results.map((r) => (r instanceof StoreUnavailableError ? "unavailable" : r instanceof Error ? `${r.name}: ${r.message}` : "written")),
        (err: unknown) => (err instanceof StoreUnavailableError ? ["unavailable", "unavailable", "unavailable"] : [String(err)]),
      ),
      WITHIN_DEADLINE_MS,
    );
    expect(outcome).toEqual(["unavailable", "unavailable", "unavailable"]);
  });

  it("fails a flag whose pipeline got no answer, rather than taking it as made", async () => {
    const redis = track(await startRedis());
    const store = track(createStore({ redisUrl: redis.url, keyPrefix: uniquePrefix() }));
    await store.ping(500);
    const pauser = new Redis(redis.url);
    defer(() => pauser.disconnect());
    await pauser.call("CLIENT", "PAUSE", "5000", "ALL");
    const flagged = store.flagForOwner("replica-1", "task-1").then(
      () => "flagged",
      (err: unknown) => (err instanceof StoreUnavailableError ? "unavailable" : String(err)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await redis.stop("SIGKILL");
    expect(await byDeadline(flagged, WITHIN_DEADLINE_MS)).toBe("unavailable");
  });

  it("rejects within the deadline when Redis was never there", async () => {
    const redis = await startRedis();
    await redis.stop();
    const store = track(createStore({ redisUrl: redis.url, keyPrefix: uniquePrefix() }));
    const calls = [
      () => store.createSession(sessionRecord(), 60_000),
      () => store.bus.subscribe("x", () => {}),
      () => store.getTask("any", null),
      () => store.renewReplicaLease("t", 1_000),
    ];
    for (const call of calls) {
      await expect(byDeadline<unknown>(call(), WITHIN_DEADLINE_MS)).rejects.toBeInstanceOf(StoreUnavailableError);
    }
  });

  it("keeps sessions across a clean restart when Redis runs with appendonly", async () => {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-aof-"));
    defer(() => rm(dir, { recursive: true, force: true }));
    const first = await startRedis({ appendonly: true, dir });
    const store = track(createStore({ redisUrl: first.url, keyPrefix: uniquePrefix() }));
    const record = sessionRecord();
    await store.createSession(record, 60_000);
    await first.stop("SIGTERM");
    track(await startRedis({ appendonly: true, dir, port: first.port }));
    const read = await waitFor(() => store.getSession(record.id, 60_000), { timeoutMs: 10_000, what: "session after restart" });
    expect(read).toEqual(record);
  });
});
