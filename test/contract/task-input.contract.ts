import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { taskChannel, type Store, type TaskRecord } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";
import { LEASE, newTask } from "./task-store.contract.js";

const ASK = {
  a: { method: "elicitation/create", params: { message: "A?", requestedSchema: { type: "object", properties: {} } } },
  b: { method: "roots/list" },
};

/** A working task with the two input requests of ASK outstanding. */
async function asking(store: Store): Promise<string> {
  const { id } = await store.createTask(newTask(), LEASE);
  const asked = await store.transitionTask(id, { kind: "start-input", addInputRequests: ASK, leaseToken: LEASE.token, now: Date.now() });
  if (!asked.ok) throw new Error(`asking refused: ${asked.reason}`);
  return id;
}

/** The task half of the contract, part two: answers, leases, hints. */
export function describeTaskInputs(current: () => Store): void {
  describe("task inputs and leases", () => {
    it("accepts answers only for outstanding keys, so unknown keys and retries change nothing", async () => {
      const id = await asking(current());
      const first = await current().addInputResponses(id, "alice", { a: { action: "accept", content: { x: 1 } }, never: {} }, Date.now());
      expect(first).toMatchObject({ accepted: ["a"], task: { revision: 3, inputResponses: { a: { action: "accept", content: { x: 1 } } } } });
      const retry = await current().addInputResponses(id, "alice", { a: { action: "decline" }, never: {} }, Date.now());
      expect(retry).toEqual({ accepted: [], task: first?.task });
      expect(await current().addInputResponses(id, "mallory", { b: {} }, Date.now())).toBeUndefined();
      expect(await current().addInputResponses(randomUUID(), "alice", { b: {} }, Date.now())).toBeUndefined();
    });

    it("views a task as getTask finds it: its status fields, open input requests, and outcome when asked for", async () => {
      const store = current();
      const seen = (task: TaskRecord | undefined, withOutcome: boolean) => {
        if (!task) return undefined;
        const { id, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, inputRequests, parked, outcome } = task;
        return { id, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, inputRequests, parked, ...(withOutcome ? { outcome } : {}) };
      };
      const view = async (id: string, principal: string | null, withOutcome: boolean) => {
        const found = await store.viewTask(id, principal, withOutcome);
        // A store may keep the outcome in the view when not asked for it (the memory store's is the record).
        return found && { ...seen(found as TaskRecord, withOutcome), ...(withOutcome ? {} : { outcome: undefined }) };
      };
      const asked = await asking(store);
      const completed = (await store.createTask(newTask(), LEASE)).id;
      const result = { content: [{ type: "text", text: "x".repeat(1000) }] };
      await store.transitionTask(completed, { kind: "complete", outcome: { result }, statusMessage: "done", leaseToken: LEASE.token, now: Date.now() });
      const failed = (await store.createTask(newTask(), LEASE)).id;
      await store.transitionTask(failed, { kind: "fail", outcome: { error: { code: -32603, message: "broke" } }, leaseToken: LEASE.token, now: Date.now() });
      for (const id of [asked, completed, failed]) {
        for (const withOutcome of [true, false])
          expect(await view(id, "alice", withOutcome)).toEqual({
            ...seen(await store.getTask(id, null), withOutcome),
            outcome: withOutcome ? (await store.getTask(id, null))?.outcome : undefined,
          });
      }
      expect((await store.viewTask(asked, "alice", false))?.inputRequests).toEqual(ASK);
      expect((await store.viewTask(completed, null, true))?.outcome).toEqual({ result });
      expect(await store.viewTask(completed, "mallory", true)).toBeUndefined();
      expect(await store.viewTask(randomUUID(), "alice", true)).toBeUndefined();
    });

    it("accepts no answer once the task is terminal", async () => {
      const id = await asking(current());
      const cancelled = await current().transitionTask(id, { kind: "cancel", now: Date.now() });
      if (!cancelled.ok) throw new Error(`cancel refused: ${cancelled.reason}`);
      expect(await current().addInputResponses(id, "alice", { a: {} }, Date.now())).toEqual({ accepted: [], task: cancelled.task });
    });

    it("hands answers to the owner once, and goes back to working only when nothing is outstanding", async () => {
      const id = await asking(current());
      await current().addInputResponses(id, "alice", { a: { action: "accept", content: { x: 1 } } }, Date.now());
      const taken = await current().takeInputResponses(id, LEASE.token, Date.now());
      expect(taken).toMatchObject({ ok: true, responses: { a: { action: "accept", content: { x: 1 } } }, task: { status: "input_required", revision: 4 } });
      expect(taken.ok && taken.task).toMatchObject({ inputRequests: { b: ASK.b }, inputResponses: {} });
      const nothing = await current().takeInputResponses(id, LEASE.token, Date.now());
      expect(nothing).toMatchObject({ ok: true, responses: {}, task: { revision: 4 } });
      await current().addInputResponses(id, "alice", { b: { roots: [] } }, Date.now());
      const last = await current().takeInputResponses(id, LEASE.token, Date.now());
      expect(last).toMatchObject({ ok: true, responses: { b: { roots: [] } }, task: { status: "working", inputRequests: {}, inputResponses: {} } });
    });

    it("gives taken answers again for the keys the owner still waits for, so a lost reply loses nothing", async () => {
      const id = await asking(current());
      await current().addInputResponses(id, "alice", { a: { action: "accept" } }, Date.now());
      const first = await current().takeInputResponses(id, LEASE.token, Date.now());
      expect(first).toMatchObject({ ok: true, responses: { a: { action: "accept" } } });
      // The owner never saw that reply: it still waits for a, and asks again.
      const again = await current().takeInputResponses(id, LEASE.token, Date.now(), ["a", "b"]);
      expect(again).toMatchObject({
        ok: true,
        responses: { a: { action: "accept" } },
        task: { revision: first.ok ? first.task.revision : -1, inputResponses: {} },
      });
      expect(again.ok && again.task.inputRequests).toEqual({ b: ASK.b });
      expect(await current().takeInputResponses(id, LEASE.token, Date.now())).toMatchObject({ ok: true, responses: {} });
    });

    it("fences taking answers by the lease", async () => {
      const id = await asking(current());
      await current().addInputResponses(id, "alice", { a: {} }, Date.now());
      expect(await current().takeInputResponses(id, "stale", Date.now())).toEqual({ ok: false, reason: "stale_lease" });
      expect(await current().takeInputResponses(randomUUID(), LEASE.token, Date.now())).toEqual({ ok: false, reason: "not_found" });
      expect((await current().getTask(id, null))?.inputResponses).toEqual({ a: {} });
    });

    it("withdraws an unanswered input request, back to working when none is left", async () => {
      const id = await asking(current());
      const one = await current().transitionTask(id, { kind: "withdraw-input", removeInputRequests: ["a"], leaseToken: LEASE.token, now: Date.now() });
      expect(one).toMatchObject({ ok: true, task: { status: "input_required", inputRequests: { b: ASK.b } } });
      const none = await current().transitionTask(id, { kind: "withdraw-input", removeInputRequests: ["b"], leaseToken: LEASE.token, now: Date.now() });
      expect(none).toMatchObject({ ok: true, task: { status: "working", inputRequests: {} } });
    });

    it("writes several transitions in one call, each answered as it would be alone", async () => {
      const store = current();
      const [ending, fenced, done] = (await Promise.all([0, 1, 2].map(() => store.createTask(newTask(), LEASE).then((t) => t.id)))) as [string, string, string];
      await store.transitionTask(done, { kind: "complete", outcome: { result: {} }, now: Date.now() });
      const results = await store.transitionTasks([
        { id: ending, change: { kind: "complete", outcome: { result: { n: 1 } }, leaseToken: LEASE.token, now: Date.now() } },
        { id: fenced, change: { kind: "fail", leaseToken: "someone-else", now: Date.now() } },
        { id: done, change: { kind: "fail", now: Date.now() } },
        { id: randomUUID(), change: { kind: "complete", leaseToken: LEASE.token, now: Date.now() } },
      ]);
      expect(results).toEqual([
        { ok: true, task: await store.getTask(ending, null) },
        { ok: false, reason: "stale_lease", task: await store.getTask(fenced, null) },
        { ok: false, reason: "wrong_status", task: await store.getTask(done, null) },
        { ok: false, reason: "not_found" },
      ]);
      expect((await store.getTask(ending, null))?.outcome).toEqual({ result: { n: 1 } });
      expect(await store.transitionTasks([])).toEqual([]);
    });

    it("announces every change on task:<id>, and no refused one", async () => {
      const task = newTask();
      const seen: string[] = [];
      const unsubscribe = await current().bus.subscribe(taskChannel(task.id), (m) => seen.push(m));
      await current().createTask(task, LEASE);
      await current().transitionTask(task.id, { kind: "start-input", addInputRequests: { k: ASK.b }, now: Date.now() });
      // Refused (a call with a question out does not detach): no hint.
      await current().transitionTask(task.id, { kind: "detach", now: Date.now() });
      await current().addInputResponses(task.id, "alice", { k: {} }, Date.now());
      await current().addInputResponses(task.id, "alice", { k: {} }, Date.now());
      await current().takeInputResponses(task.id, LEASE.token, Date.now());
      await current().transitionTask(task.id, { kind: "complete", outcome: { result: {} }, now: Date.now() });
      // Hints arrive in order, so once the last is in, nothing was published between them.
      await waitFor(() => seen.includes("5"), { timeoutMs: 5_000, what: "the fifth hint" });
      expect(seen).toEqual(["1", "2", "3", "4", "5"]);
      await unsubscribe();
    });
  });
}
