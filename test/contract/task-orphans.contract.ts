import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Lease, Orphan, Store } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";
import { created, LEASE, newTask } from "./task-store.contract.js";

const ERROR = { code: -32603, message: "the replica running this call stopped" };

/** A replica lease of its own for one test, started (unique: the store's leases are shared by every test of a run). */
export async function startedLease(store: Store, owner = "replica-1", leaseMs = 10_000): Promise<Lease> {
  const lease = { owner, token: `lease-${randomUUID()}` };
  expect(await store.renewReplicaLease(lease.token, leaseMs, true)).toBe(true);
  return lease;
}

/** Wait until the store reports `id` among the orphans. */
export async function orphaned(store: Store, id: string): Promise<Orphan> {
  return waitFor(async () => (await store.findOrphans(1_000, 60_000)).find((o) => o.task.id === id), {
    timeoutMs: 5_000,
    what: `task ${id} to be an orphan`,
  });
}

/** The reaper's half of the store contract: replica leases, orphans, ending and claiming them, the lock. */
export function describeOrphans(current: () => Store): void {
  describe("replica leases", () => {
    it("holds while renewed, lapses after leaseMs, and a lapsed lease never comes back", async () => {
      const store = current();
      const { token } = await startedLease(store, "replica-1", 300);
      expect(await store.renewReplicaLease(token, 300)).toBe(true);
      // Counted from before the renewal left, so the store's own lease ends no later than this.
      const renewedBy = Date.now();
      // Real time: the lease lapses on the store's clock (a Redis key's PX), which no fake clock moves.
      await waitFor(() => Date.now() - renewedBy > 400, { timeoutMs: 5_000, what: "leaseMs to pass without a renewal" });
      expect(await store.renewReplicaLease(token, 60_000)).toBe(false);
      // Nor is it started again: a token is started once.
      expect(await store.renewReplicaLease(token, 60_000, true)).toBe(false);
      expect(await store.renewReplicaLease(`never-${randomUUID()}`, 60_000)).toBe(false);
    });

    it("ends a lease at once: its tasks are orphans at the next look", async () => {
      const store = current();
      const lease = await startedLease(store);
      const task = newTask();
      await store.createTask(task, lease);
      expect((await store.findOrphans(1_000, 60_000)).map((o) => o.task.id)).not.toContain(task.id);
      await store.endReplicaLease(lease.token);
      expect(await store.renewReplicaLease(lease.token, 60_000)).toBe(false);
      expect(await orphaned(store, task.id)).toEqual({ task: created(task), token: lease.token });
    });

    it("keeps what is flagged for an owner until the owner takes it, each id once", async () => {
      const store = current();
      const owner = `replica-${randomUUID()}`;
      await store.flagForOwner(owner, "t1");
      await store.flagForOwner(owner, "t2");
      await store.flagForOwner(owner, "t1");
      expect((await store.takeFlagged(owner, 10)).sort()).toEqual(["t1", "t2"]);
      expect(await store.takeFlagged(owner, 10)).toEqual([]);
      for (let i = 0; i < 5; i++) await store.flagForOwner(owner, `m${i}`);
      expect(await store.takeFlagged(owner, 3)).toHaveLength(3);
      expect(await store.takeFlagged(owner, 3)).toHaveLength(2);
    });
  });

  describe("orphans", () => {
    it("finds the non-terminal tasks of a lapsed lease, and none of a live lease or ended", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const live = await startedLease(store, "replica-2");
      const orphan = newTask({ requestParams: { name: "sleep", arguments: { seconds: 1 } } });
      const held = newTask();
      const ended = newTask();
      await store.createTask(orphan, stopped);
      await store.createTask(ended, stopped);
      await store.createTask(held, live);
      await store.transitionTask(ended.id, { kind: "complete", outcome: { result: {} }, leaseToken: stopped.token, now: Date.now() });
      await store.endReplicaLease(stopped.token);
      const found = await orphaned(store, orphan.id);
      expect(found).toEqual({ task: created(orphan), token: stopped.token });
      const ids = (await store.findOrphans(1_000, 60_000)).map((o) => o.task.id);
      expect(ids).not.toContain(held.id);
      expect(ids).not.toContain(ended.id);
    });

    it("ends an orphan once, with its error, and never a task another lease holds or a terminal one", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const orphan = newTask();
      const held = newTask();
      await store.createTask(orphan, stopped);
      await store.createTask(held, LEASE);
      await store.endReplicaLease(stopped.token);
      const found = await orphaned(store, orphan.id);
      const end = { to: "failed" as const, statusMessage: "stopped", outcome: { error: ERROR }, now: Date.now() };
      const reaped = await store.reapTask(found, end);
      expect(reaped.ok && reaped.task).toMatchObject({ status: "failed", statusMessage: "stopped", outcome: { error: ERROR }, revision: 2 });
      expect(await store.reapTask(found, end)).toMatchObject({ ok: false, reason: "wrong_status" });
      expect(await store.reapTask({ task: created(held), token: stopped.token }, end)).toMatchObject({ ok: false, reason: "stale_lease" });
      expect(await store.reapTask({ task: { ...created(held), id: "no-such-task" }, token: stopped.token }, end)).toEqual({ ok: false, reason: "not_found" });
      expect((await store.findOrphans(1_000, 60_000)).map((o) => o.task.id)).not.toContain(orphan.id);
    });

    it("hands an orphan to a new owner for its next attempt, fencing out the lapsed lease's writes", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const orphan = newTask();
      await store.createTask(orphan, stopped);
      await store.transitionTask(orphan.id, { kind: "start-input", addInputRequests: { q1: { method: "elicitation/create" } }, now: Date.now() });
      await store.addInputResponses(orphan.id, "alice", { q1: { action: "accept" } }, Date.now());
      await store.endReplicaLease(stopped.token);
      const found = await orphaned(store, orphan.id);
      const lease = await startedLease(store, "replica-2");
      const claimed = await store.claimTask(found, lease, "Attempt 2 of 3", Date.now());
      expect(claimed.ok && claimed.task).toMatchObject({
        status: "working",
        owner: "replica-2",
        attempt: 2,
        inputRequests: {},
        inputResponses: {},
        statusMessage: "Attempt 2 of 3",
      });
      expect(await store.claimTask(found, { owner: "replica-3", token: "tok-other" }, "again", Date.now())).toMatchObject({ ok: false, reason: "stale_lease" });
      const stale = await store.transitionTask(orphan.id, { kind: "complete", leaseToken: stopped.token, now: Date.now() });
      expect(stale).toMatchObject({ ok: false, reason: "stale_lease" });
      expect(await store.takeInputResponses(orphan.id, stopped.token, Date.now())).toEqual({ ok: false, reason: "stale_lease" });
      const mine = await store.transitionTask(orphan.id, { kind: "complete", outcome: { result: {} }, leaseToken: lease.token, now: Date.now() });
      expect(mine).toMatchObject({ ok: true, task: { status: "completed", owner: "replica-2" } });
      // Claimed under a live lease: no longer the lapsed lease's orphan.
      expect((await store.findOrphans(1_000, 60_000)).map((o) => o.task.id)).not.toContain(orphan.id);
    });

    it("finds the orphans of a lapsed lease again after a claim under a lease that lapsed too", async () => {
      const store = current();
      const first = await startedLease(store);
      const task = newTask();
      await store.createTask(task, first);
      await store.endReplicaLease(first.token);
      const second = await startedLease(store, "replica-2");
      expect((await store.claimTask(await orphaned(store, task.id), second, "attempt 2", Date.now())).ok).toBe(true);
      await store.endReplicaLease(second.token);
      const again = await orphaned(store, task.id);
      expect(again.token).toBe(second.token);
      expect(again.task).toMatchObject({ owner: "replica-2", attempt: 2 });
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
