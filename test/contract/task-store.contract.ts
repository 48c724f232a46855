import { afterEach, describe, expect, it } from "vitest";
import { taskChannel, type NewTask, type Store } from "../../src/store/contract.js";
import { allowedFrom, NON_TERMINAL } from "../../src/tasks/transitions.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import { waitFor } from "../helpers/wait-for.js";

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  const now = Date.now();
  return {
    id: newTaskId(now),
    principal: "alice",
    dialect: "B",
    upstream: "demo",
    tool: "sleep",
    status: "working",
    createdAt: now,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    owner: "replica-1",
    clientCapabilities: { elicitation: { form: {} }, extensions: {} },
    ...overrides,
  };
}

const LEASE = { owner: "replica-1", token: "tok-1", leaseMs: 10_000 };

/** The task half of the store contract: both stores run exactly these. */
export function describeTaskStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`${name} task store`, () => {
    const stores: Store[] = [];
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
    });
    async function store() {
      const s = await makeStore();
      stores.push(s);
      return s;
    }

    it("creates a task readable at once, by its principal or an operator only", async () => {
      const s = await store();
      const created = await s.createTask(newTask(), LEASE);
      expect(created).toMatchObject({ status: "working", revision: 1, cancelRequested: false, inputRequests: {}, inputResponses: {} });
      expect(await s.getTask(created.id, "alice")).toEqual(created);
      expect(await s.getTask(created.id, null)).toEqual(created);
      expect(await s.getTask(created.id, "mallory")).toBeUndefined();
      expect(await s.getTask("nope", "alice")).toBeUndefined();
    });

    it("moves from an allowed status, bumps the revision, and never leaves a terminal one", async () => {
      const s = await store();
      const { id } = await s.createTask(newTask(), LEASE);
      const result = { content: [], structuredContent: { nested: { list: [], empty: {} } }, isError: false };
      const done = await s.transitionTask(id, { from: allowedFrom("completed"), to: "completed", outcome: { result }, leaseToken: LEASE.token, now: Date.now() + 5 });
      expect(done).toMatchObject({ ok: true, task: { status: "completed", revision: 2, outcome: { result } } });
      const again = await s.transitionTask(id, { from: ["completed"], to: "completed", now: Date.now() });
      expect(again).toMatchObject({ ok: false, reason: "wrong_status", task: { status: "completed", revision: 2 } });
      const back = await s.transitionTask(id, { from: ["completed", "working"], to: "working", now: Date.now() });
      expect(back.ok).toBe(false);
    });

    it("fences owner writes by the lease token and client writes by the principal", async () => {
      const s = await store();
      const { id } = await s.createTask(newTask(), LEASE);
      expect(await s.transitionTask(id, { from: NON_TERMINAL, to: "failed", leaseToken: "stale", now: Date.now() })).toMatchObject({ ok: false, reason: "stale_lease" });
      expect(await s.transitionTask(id, { from: NON_TERMINAL, cancelRequested: true, principal: "mallory", now: Date.now() })).toEqual({ ok: false, reason: "not_found" });
      const error = { code: -32000, message: "boom", data: { why: [1, 2] } };
      const failed = await s.transitionTask(id, { from: NON_TERMINAL, to: "failed", outcome: { error }, statusMessage: "boom", leaseToken: LEASE.token, now: Date.now() });
      expect(failed).toMatchObject({ ok: true, task: { status: "failed", statusMessage: "boom", outcome: { error } } });
    });

    it("keeps input requests until answered; ignores unknown and repeated answers; back to working when none is left", async () => {
      const s = await store();
      const { id } = await s.createTask(newTask(), LEASE);
      const ask = { a: { method: "elicitation/create", params: { message: "A?", requestedSchema: { type: "object", properties: {} } } }, b: { method: "roots/list" } };
      await s.transitionTask(id, { from: NON_TERMINAL, to: "input_required", addInputRequests: ask, leaseToken: LEASE.token, now: Date.now() });
      const first = await s.addInputResponses(id, "alice", { a: { action: "accept", content: { x: 1 } }, never: {} }, Date.now());
      expect(first?.accepted).toEqual(["a"]);
      expect((await s.addInputResponses(id, "alice", { a: { action: "decline" } }, Date.now()))?.accepted).toEqual([]);
      expect(await s.addInputResponses(id, "mallory", { b: {} }, Date.now())).toBeUndefined();
      const taken = await s.takeInputResponses(id, LEASE.token, Date.now());
      expect(taken).toMatchObject({ ok: true, responses: { a: { action: "accept", content: { x: 1 } } }, task: { status: "input_required", inputRequests: { b: ask.b } } });
      await s.addInputResponses(id, "alice", { b: { roots: [] } }, Date.now());
      expect(await s.takeInputResponses(id, "stale", Date.now())).toEqual({ ok: false, reason: "stale_lease" });
      const last = await s.takeInputResponses(id, LEASE.token, Date.now());
      expect(last).toMatchObject({ ok: true, responses: { b: { roots: [] } }, task: { status: "working", inputRequests: {} } });
      const withdrawn = await s.transitionTask(id, { from: NON_TERMINAL, to: "input_required", addInputRequests: { c: { method: "roots/list" } }, leaseToken: LEASE.token, now: Date.now() });
      expect(withdrawn.ok).toBe(true);
      const removed = await s.transitionTask(id, { from: NON_TERMINAL, removeInputRequests: ["c"], leaseToken: LEASE.token, now: Date.now() });
      expect(removed).toMatchObject({ ok: true, task: { status: "working", inputRequests: {} } });
    });

    it("renews many leases at once and says what waits for the owner", async () => {
      const s = await store();
      const tasks = await Promise.all([0, 1, 2].map((i) => s.createTask(newTask(), { ...LEASE, token: `t${i}` })));
      await s.transitionTask(tasks[1]!.id, { from: NON_TERMINAL, cancelRequested: true, principal: "alice", now: Date.now() });
      await s.releaseLease(tasks[2]!.id, "t2");
      const states = await s.renewLeases(tasks.map((t, i) => ({ taskId: t.id, token: `t${i}` })), 5_000);
      expect(states.map((x) => [x.held, x.cancelRequested])).toEqual([[true, false], [true, true], [false, false]]);
    });

    it("expires a task at createdAt + ttlMs", async () => {
      const s = await store();
      const { id } = await s.createTask(newTask({ ttlMs: 300 }), LEASE);
      expect(await s.getTask(id, "alice")).toBeDefined();
      await waitFor(async () => (await s.getTask(id, "alice")) === undefined, { timeoutMs: 3000, what: "expiry" });
    });

    it("publishes every change on the task's channel", async () => {
      const s = await store();
      const { id } = await s.createTask(newTask(), LEASE);
      const seen: string[] = [];
      const unsubscribe = await s.bus.subscribe(taskChannel(id), (m) => seen.push(m));
      await s.transitionTask(id, { from: NON_TERMINAL, statusMessage: "half way", leaseToken: LEASE.token, now: Date.now() });
      await waitFor(() => seen.includes("2"), { what: "the hint" });
      await unsubscribe();
    });

    it("lists a principal's tasks newest first, in pages", async () => {
      const s = await store();
      const principal = `p-${Math.random()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.createTask(newTask({ principal, createdAt: Date.now() + i }), LEASE)).id);
      const first = await s.listTasks(principal, { limit: 2 });
      expect(first?.tasks.map((t) => t.id)).toEqual([ids[4], ids[3]]);
      const rest = await s.listTasks(principal, { limit: 10, cursor: first!.nextCursor! });
      expect(rest?.tasks.map((t) => t.id)).toEqual([ids[2], ids[1], ids[0]]);
      expect(rest?.nextCursor).toBeUndefined();
      expect(await s.listTasks(principal, { limit: 2, cursor: "bogus" })).toBeUndefined();
    });
  });
}
