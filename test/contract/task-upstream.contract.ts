import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";
import { orphaned, startedLease } from "./task-orphans.contract.js";
import { LEASE, newTask } from "./task-store.contract.js";

/** A task bridged to an upstream's own task: the upstream task it follows, and a life no longer than the upstream's. */
export function describeUpstreamTasks(current: () => Store): void {
  describe("tasks bridged to an upstream task", () => {
    it("keeps the upstream task and its session once the owner writes them, fenced by its lease", async () => {
      const { id } = await current().createTask(newTask(), LEASE);
      const upstreamTask = { taskId: "up-1", session: "sess-1" };
      const stale = await current().transitionTask(id, { kind: "bind-upstream-task", upstreamTask, leaseToken: "other", now: Date.now() });
      expect(stale).toMatchObject({ ok: false, reason: "stale_lease" });
      const written = await current().transitionTask(id, { kind: "bind-upstream-task", upstreamTask, leaseToken: LEASE.token, now: Date.now() });
      expect(written).toMatchObject({ ok: true, task: { upstreamTaskId: "up-1", upstreamSession: "sess-1", revision: 2 } });
      expect(await current().getTask(id, "alice")).toMatchObject({ upstreamTaskId: "up-1", upstreamSession: "sess-1" });
      const { id: plain } = await current().createTask(newTask(), LEASE);
      await current().transitionTask(plain, { kind: "bind-upstream-task", upstreamTask: { taskId: "up-2" }, leaseToken: LEASE.token, now: Date.now() });
      const read = await current().getTask(plain, null);
      expect(read?.upstreamTaskId).toBe("up-2");
      expect(read).not.toHaveProperty("upstreamSession");
    });

    it("keeps the upstream task when another replica claims the orphan, so it follows the same task", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const orphan = newTask({ upstreamTaskId: "up-3", upstreamSession: "sess-3" });
      await store.createTask(orphan, stopped);
      await store.endReplicaLease(stopped.token);
      const found = await orphaned(store, orphan.id);
      const claimed = await store.claimTask(found, { owner: "replica-2", token: "tok-u2" }, "following the upstream task", Date.now());
      expect(claimed.ok && claimed.task).toMatchObject({ owner: "replica-2", upstreamTaskId: "up-3", upstreamSession: "sess-3", status: "working" });
    });

    it("keeps where a call's response stream can be resumed, fenced by the owner's lease, and through a claim", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const task = newTask();
      await store.createTask(task, stopped);
      const stream = { requestId: "7", lastEventId: "s1_0001", session: "sess-7" };
      const stale = await store.transitionTask(task.id, { kind: "bind-stream", stream, leaseToken: "other", now: Date.now() });
      expect(stale).toMatchObject({ ok: false, reason: "stale_lease" });
      const written = await store.transitionTask(task.id, { kind: "bind-stream", stream, leaseToken: stopped.token, now: Date.now() });
      expect(written).toMatchObject({ ok: true, task: { upstreamRequestId: "7", lastEventId: "s1_0001", upstreamSession: "sess-7", revision: 2 } });
      await store.endReplicaLease(stopped.token);
      const claimed = await store.claimTask(await orphaned(store, task.id), { owner: "replica-2", token: "tok-s2" }, "resuming the stream", Date.now());
      expect(claimed.ok && claimed.task).toMatchObject({ owner: "replica-2", upstreamRequestId: "7", lastEventId: "s1_0001", upstreamSession: "sess-7" });
      const { id: sessionless } = await store.createTask(newTask(), LEASE);
      const bound = await store.transitionTask(sessionless, {
        kind: "bind-stream",
        stream: { requestId: '"a"', lastEventId: "e" },
        leaseToken: LEASE.token,
        now: Date.now(),
      });
      expect(bound.ok && bound.task).not.toHaveProperty("upstreamSession");
    });

    it("keeps a queued call's params, fenced by the owner's lease and through a claim, until it starts", async () => {
      const store = current();
      const stopped = await startedLease(store);
      const task = newTask();
      await store.createTask(task, stopped);
      const requestParams = { name: "sleep", arguments: { seconds: 20 } };
      const stale = await store.transitionTask(task.id, { kind: "queue", requestParams, leaseToken: "other", now: Date.now() });
      expect(stale).toMatchObject({ ok: false, reason: "stale_lease" });
      const queued = await store.transitionTask(task.id, { kind: "queue", requestParams, leaseToken: stopped.token, now: Date.now() });
      expect(queued).toMatchObject({ ok: true, task: { queued: true, requestParams, revision: 2 } });
      await store.endReplicaLease(stopped.token);
      const claimed = await store.claimTask(await orphaned(store, task.id), { owner: "replica-2", token: "tok-q2" }, "queued again", Date.now());
      expect(claimed.ok && claimed.task).toMatchObject({ owner: "replica-2", queued: true, requestParams });
      const started = await store.transitionTask(task.id, { kind: "start-queued", keepParams: false, leaseToken: "tok-q2", now: Date.now() });
      expect(started.ok && started.task).not.toHaveProperty("queued");
      expect(started.ok && started.task).not.toHaveProperty("requestParams");
      const { id: kept } = await store.createTask(newTask(), LEASE);
      await store.transitionTask(kept, { kind: "queue", requestParams, leaseToken: LEASE.token, now: Date.now() });
      const keeping = await store.transitionTask(kept, { kind: "start-queued", keepParams: true, leaseToken: LEASE.token, now: Date.now() });
      expect(keeping.ok && keeping.task).toMatchObject({ requestParams });
      expect(keeping.ok && keeping.task).not.toHaveProperty("queued");
    });

    it("shortens a task's life, counted from its creation, and never lengthens it", async () => {
      const task = newTask({ createdAt: Date.now() - 60_000, ttlMs: 600_000 });
      await current().createTask(task, LEASE);
      const longer = await current().transitionTask(task.id, {
        kind: "bind-upstream-task",
        upstreamTask: { taskId: "up-ttl" },
        ttlMs: 900_000,
        leaseToken: LEASE.token,
        now: Date.now(),
      });
      expect(longer).toMatchObject({ ok: true, task: { ttlMs: 600_000 } });
      const shorter = await current().transitionTask(task.id, {
        kind: "bind-upstream-task",
        upstreamTask: { taskId: "up-ttl" },
        ttlMs: 60_400,
        leaseToken: LEASE.token,
        now: Date.now(),
      });
      expect(shorter).toMatchObject({ ok: true, task: { ttlMs: 60_400 } });
      await waitFor(async () => (await current().getTask(task.id, null)) === undefined, { timeoutMs: 3_000, what: "the task to expire at its shorter end" });
      // Real time: the expiry is the store's own (Redis PEXPIREAT), so only the wall clock shows it was not early.
      expect(Date.now()).toBeGreaterThanOrEqual(task.createdAt + 60_400);
    });

    it("shortens the life of the outcome too: written by the shortening ending, or after an earlier shortening", async () => {
      const store = current();
      const createdAt = Date.now() - 60_000;
      const ttlMs = 60_600;
      // One ending shortens the life and writes the outcome; the other's life was shortened
      // earlier (bound to an upstream task) and its outcome is written after, with no ttlMs.
      const byEnding = newTask({ createdAt, ttlMs: 600_000 });
      const earlier = newTask({ createdAt, ttlMs: 600_000 });
      await store.createTask(byEnding, LEASE);
      await store.createTask(earlier, LEASE);
      const fence = { leaseToken: LEASE.token, now: Date.now() };
      await store.transitionTask(earlier.id, { kind: "bind-upstream-task", upstreamTask: { taskId: "up-out" }, ttlMs, ...fence });
      const outcomes = {
        [byEnding.id]: { result: { content: [{ type: "text", text: "by the ending" }] } },
        [earlier.id]: { result: { content: [{ type: "text", text: "after" }] } },
      };
      expect(await store.transitionTask(byEnding.id, { kind: "complete", outcome: outcomes[byEnding.id]!, ttlMs, ...fence })).toMatchObject({
        ok: true,
        task: { ttlMs },
      });
      expect(await store.transitionTask(earlier.id, { kind: "complete", outcome: outcomes[earlier.id]!, ...fence })).toMatchObject({
        ok: true,
        task: { ttlMs },
      });
      for (const id of [byEnding.id, earlier.id]) {
        expect((await store.getTask(id, null))?.outcome).toEqual(outcomes[id]);
        expect((await store.viewTask(id, null, true))?.outcome).toEqual(outcomes[id]);
      }
      // Real time: the store's own expiry (Redis PEXPIREAT, the memory store's clock) is what is checked.
      await waitFor(async () => (await store.viewTask(byEnding.id, null, true)) === undefined && (await store.viewTask(earlier.id, null, true)) === undefined, {
        timeoutMs: 3_000,
        what: "both ended tasks and their outcomes to expire at the shorter end",
      });
      expect(Date.now()).toBeGreaterThanOrEqual(createdAt + ttlMs);
    });

    it("refuses a ttlMs that is not a positive integer", async () => {
      const { id } = await current().createTask(newTask(), LEASE);
      await expect(
        current().transitionTask(id, { kind: "bind-upstream-task", upstreamTask: { taskId: "up-ttl" }, ttlMs: 0, now: Date.now() }),
      ).rejects.toBeInstanceOf(RangeError);
      await expect(
        current().transitionTask(id, { kind: "bind-upstream-task", upstreamTask: { taskId: "up-ttl" }, ttlMs: 1.5, now: Date.now() }),
      ).rejects.toBeInstanceOf(RangeError);
    });
  });
}
