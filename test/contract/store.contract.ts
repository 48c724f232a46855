import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreUnavailableError, type SessionRecord, type Store } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";
import { describeTaskInputs } from "./task-input.contract.js";
import { describeOrphans } from "./task-orphans.contract.js";
import { describeTaskQuota } from "./task-quota.contract.js";
import { describeUpstreamTasks } from "./task-upstream.contract.js";
import { describeTasks, LEASE, newTask } from "./task-store.contract.js";

export function sessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const id = randomUUID();
  return {
    id,
    upstream: "default",
    protocolVersion: "2025-06-18",
    clientCapabilities: { elicitation: {} },
    clientInfo: { name: "contract-test", version: "1.0.0" },
    principal: `session:${id}`,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

/** Reading keeps a session alive, so expiry is watched with polls spaced wider than its TTL. */
/**
 * Wait until the session is gone, polling with hasSession (which leaves its expiry alone, where a
 * getSession would push it out); returns when it was first seen gone. Real time: the expiry is
 * the store's own (Redis PEXPIRE), which no fake clock moves.
 */
async function expiredAt(store: Store, id: string): Promise<number> {
  await waitFor(async () => !(await store.hasSession(id)), { timeoutMs: 5_000, intervalMs: 20, what: `session ${id} to expire` });
  return Date.now();
}

/** The one suite every Store runs: what holds here holds for memory and Redis alike. */
export function describeStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    describeSessions(() => store);
    describeTasks(() => store);
    describeTaskInputs(() => store);
    describeOrphans(() => store);
    describeTaskQuota(() => store);
    describeUpstreamTasks(() => store);
    describeBus(() => store);

    it("answers ping", async () => {
      await expect(store.ping(1_000)).resolves.toBeUndefined();
    });

    it("is unavailable once closed, and closing twice is harmless", async () => {
      await store.close();
      await expect(store.getSession("any", 1_000)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.bus.publish("any", "m")).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.createTask(newTask(), LEASE)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.getTask("any", null)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.renewReplicaLease("t", 1_000)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.transitionTasks([{ id: "any", change: { kind: "detach", now: 1 } }])).rejects.toBeInstanceOf(StoreUnavailableError);
      await store.close();
    });
  });
}

function describeSessions(current: () => Store): void {
  describe("sessions", () => {
    it("reads back what was created, as a copy", async () => {
      const record = sessionRecord();
      await current().createSession(record, 60_000);
      record.principal = "changed after create";
      const read = await current().getSession(record.id, 60_000);
      expect(read).toEqual({ ...record, principal: `session:${record.id}` });
    });

    it("reads an unknown id as undefined", async () => {
      expect(await current().getSession(randomUUID(), 60_000)).toBeUndefined();
    });

    it("deletes a session once, and reports an unknown one as not deleted", async () => {
      const record = sessionRecord();
      await current().createSession(record, 60_000);
      expect(await current().hasSession(record.id)).toBe(true);
      expect(await current().deleteSession(record.id)).toBe(true);
      expect(await current().hasSession(record.id)).toBe(false);
      expect(await current().getSession(record.id, 60_000)).toBeUndefined();
      expect(await current().deleteSession(record.id)).toBe(false);
    });

    it("expires a session left idle for its TTL", async () => {
      const record = sessionRecord();
      const written = Date.now();
      await current().createSession(record, 300);
      expect(await current().hasSession(record.id)).toBe(true);
      // Gone, and not before its TTL was over (a store that dropped it at once fails here).
      expect((await expiredAt(current(), record.id)) - written).toBeGreaterThanOrEqual(300);
    });

    it("keeps a session alive past its first TTL when a read gives it a longer one", async () => {
      const record = sessionRecord();
      const createdAt = Date.now();
      await current().createSession(record, 1_000);
      expect(await current().getSession(record.id, 60_000)).toBeDefined();
      // Without the read it would be gone once its first TTL is over: wait for that moment to pass
      // (real time: the expiry is the store's own, which no fake clock moves).
      await waitFor(() => Date.now() > createdAt + 1_500, { what: "the first TTL to be over" });
      expect(await current().hasSession(record.id)).toBe(true);
      const read = Date.now();
      expect(await current().getSession(record.id, 100)).toBeDefined();
      expect((await expiredAt(current(), record.id)) - read).toBeGreaterThanOrEqual(100);
    });

    it("sets the expiry to the TTL of the read, even a shorter one", async () => {
      const record = sessionRecord();
      await current().createSession(record, 60_000);
      const read = Date.now();
      expect(await current().getSession(record.id, 100)).toBeDefined();
      expect((await expiredAt(current(), record.id)) - read).toBeGreaterThanOrEqual(100);
    });

    it("refuses a TTL that is not a positive integer", async () => {
      const record = sessionRecord();
      for (const ttlMs of [0, -1, 1.5, Number.NaN]) {
        await expect(current().createSession(record, ttlMs)).rejects.toBeInstanceOf(RangeError);
        await expect(current().getSession(record.id, ttlMs)).rejects.toBeInstanceOf(RangeError);
      }
      expect(await current().getSession(record.id, 60_000)).toBeUndefined();
    });
  });
}

function describeBus(current: () => Store): void {
  describe("bus", () => {
    it("delivers a message to every subscriber of its channel, and only there", async () => {
      const a1: string[] = [];
      const a2: string[] = [];
      const b: string[] = [];
      await current().bus.subscribe("a", (m) => a1.push(m));
      await current().bus.subscribe("a", (m) => a2.push(m));
      await current().bus.subscribe("b", (m) => b.push(m));
      await current().bus.publish("a", "to a");
      await current().bus.publish("b", "to b");
      // Messages arrive in publish order, so once "to b" is in, "to a" has been delivered too.
      await waitFor(() => b.length > 0, { timeoutMs: 5_000, what: "message on b" });
      expect({ a1, a2, b }).toEqual({ a1: ["to a"], a2: ["to a"], b: ["to b"] });
    });

    it("stops delivering to a handler once it unsubscribes, not to the others", async () => {
      const gone: string[] = [];
      const stays: string[] = [];
      const unsubscribe = await current().bus.subscribe("c", (m) => gone.push(m));
      await current().bus.subscribe("c", (m) => stays.push(m));
      await unsubscribe();
      await unsubscribe();
      await current().bus.publish("c", "after");
      await waitFor(() => stays.length > 0, { timeoutMs: 5_000, what: "message to the remaining handler" });
      expect({ gone, stays }).toEqual({ gone: [], stays: ["after"] });
    });

    it("delivers again after the last handler left and a new one came", async () => {
      const received: string[] = [];
      await (await current().bus.subscribe("d", () => received.push("old")))();
      await current().bus.subscribe("d", (m) => received.push(m));
      await current().bus.publish("d", "new");
      await waitFor(() => received.length > 0, { timeoutMs: 5_000, what: "message on d" });
      expect(received).toEqual(["new"]);
    });
  });
}
