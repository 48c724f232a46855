import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";
import { created, LEASE, newTask } from "./task-store.contract.js";

const SHORT = { owner: "replica-1", token: "short-1", leaseMs: 150 };
const ERROR = { code: -32603, message: "the replica running this call stopped" };

/** Wait until the store reports `id` among the orphans (its 150 ms lease ran out). */
async function orphaned(store: Store, id: string) {
  return waitFor(async () => (await store.findOrphans(Date.now() + 1, 1_000)).find((t) => t.id === id), {
    timeoutMs: 5_000,
    what: `task ${id} to be an orphan`,
  });
}

/** The reaper's half of the store contract: orphans, ending and claiming them, the lock. */
export function describeOrphans(current: () => Store): void {
  describe("orphans", () => {
    it("finds a non-terminal task whose lease expired, and none that is leased, ended or too young", async () => {
      const store = current();
      const orphan = newTask({ requestParams: { name: "sleep", arguments: { seconds: 1 } } });
      const leased = newTask();
      const ended = newTask();
      const young = newTask({ createdAt: Date.now() + 60_000 });
      await store.createTask(orphan, SHORT);
      await store.createTask(leased, LEASE);
      await store.createTask(ended, { ...SHORT, token: "short-2" });
      await store.createTask(young, { ...SHORT, token: "short-3" });
      await store.transitionTask(ended.id, { kind: "complete", outcome: { result: {} }, now: Date.now() });
      const found = await orphaned(store, orphan.id);
      expect(found).toEqual(created(orphan));
      const ids = (await store.findOrphans(Date.now() + 1, 1_000)).map((t) => t.id);
      expect(ids).not.toContain(leased.id);
      expect(ids).not.toContain(ended.id);
      expect(ids).not.toContain(young.id);
    });

    it("ends an orphan once, with its error, and never a leased or terminal task", async () => {
      const store = current();
      const orphan = newTask();
      const leased = newTask();
      await store.createTask(orphan, SHORT);
      await store.createTask(leased, LEASE);
      await orphaned(store, orphan.id);
      const end = { to: "failed" as const, statusMessage: "stopped", outcome: { error: ERROR }, now: Date.now() };
      const reaped = await store.reapTask(orphan.id, end);
      expect(reaped.ok && reaped.task).toMatchObject({ status: "failed", statusMessage: "stopped", outcome: { error: ERROR }, revision: 2 });
      expect(await store.reapTask(orphan.id, end)).toMatchObject({ ok: false, reason: "wrong_status" });
      expect(await store.reapTask(leased.id, end)).toMatchObject({ ok: false, reason: "stale_lease" });
      expect(await store.reapTask("no-such-task", end)).toEqual({ ok: false, reason: "not_found" });
    });

    it("hands an orphan to a new owner for its next attempt, fencing out the old token", async () => {
      const store = current();
      const orphan = newTask();
      await store.createTask(orphan, SHORT);
      await store.transitionTask(orphan.id, { kind: "start-input", addInputRequests: { q1: { method: "elicitation/create" } }, now: Date.now() });
      await store.addInputResponses(orphan.id, "alice", { q1: { action: "accept" } }, Date.now());
      await orphaned(store, orphan.id);
      const lease = { owner: "replica-2", token: "tok-new", leaseMs: 10_000 };
      const claimed = await store.claimTask(orphan.id, lease, "Attempt 2 of 3", Date.now());
      expect(claimed.ok && claimed.task).toMatchObject({
        status: "working",
        owner: "replica-2",
        attempt: 2,
        inputRequests: {},
        inputResponses: {},
        statusMessage: "Attempt 2 of 3",
      });
      expect(await store.claimTask(orphan.id, { ...lease, token: "tok-other" }, "again", Date.now())).toMatchObject({ ok: false, reason: "stale_lease" });
      const [renewed] = await store.renewLeases([{ taskId: orphan.id, token: "tok-new" }], 10_000);
      expect(renewed?.held).toBe(true);
      const stale = await store.transitionTask(orphan.id, { kind: "complete", leaseToken: SHORT.token, now: Date.now() });
      expect(stale).toMatchObject({ ok: false, reason: "stale_lease" });
    });

    it("gives a lock to one holder at a time, keeps it for that holder, and frees it when it expires", async () => {
      const store = current();
      const name = `reaper-${Math.random()}`;
      expect(await store.acquireLock(name, "a", 200)).toBe(true);
      expect(await store.acquireLock(name, "b", 200)).toBe(false);
      expect(await store.acquireLock(name, "a", 200)).toBe(true);
      await waitFor(() => store.acquireLock(name, "b", 10_000), { timeoutMs: 5_000, what: "the lock to expire" });
      expect(await store.acquireLock(name, "a", 200)).toBe(false);
    });
  });
}
