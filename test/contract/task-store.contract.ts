import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Lease, NewTask, Store, TaskChange, TaskRecord } from "../../src/store/contract.js";
import { waitFor } from "../helpers/wait-for.js";

export const LEASE: Lease = { owner: "replica-1", token: "tok-1" };

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: randomUUID(),
    principal: "alice",
    taskProtocol: "extension",
    upstream: "demo",
    tool: "sleep",
    status: "working",
    createdAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
    owner: "replica-1",
    clientCapabilities: { elicitation: { form: {} }, extensions: {} },
    ...overrides,
  };
}

/** What createTask must have stored for `task`. */
export function created(task: NewTask): TaskRecord {
  return {
    ...task,
    lastUpdatedAt: task.createdAt,
    revision: 1,
    cancelRequested: false,
    inputRequests: {},
    inputResponses: {},
    parked: task.parked ?? false,
    attempt: 1,
  };
}

/** The task half of the store contract: records, transitions, expiry (inputs and leases: task-input.contract.ts). */
export function describeTasks(current: () => Store): void {
  describe("tasks", () => {
    it("creates a task readable at once by its principal or an operator, as a copy", async () => {
      const task = newTask({ statusMessage: "queued", upstreamRequestId: '"r-1"', frontSession: "session-1" });
      expect(await current().createTask(task, LEASE)).toEqual(created(task));
      task.principal = "changed after create";
      expect(await current().getTask(task.id, "alice")).toEqual(created({ ...task, principal: "alice" }));
      expect(await current().getTask(task.id, null)).toEqual(created({ ...task, principal: "alice" }));
    });

    it("reads another principal's task and an unknown id alike, as undefined", async () => {
      const { id } = await current().createTask(newTask(), LEASE);
      expect(await current().getTask(id, "mallory")).toBeUndefined();
      expect(await current().getTask(randomUUID(), "alice")).toBeUndefined();
      expect(await current().getTask(randomUUID(), null)).toBeUndefined();
    });

    it("refuses an empty principal, which must never mean any", async () => {
      const { id } = await current().createTask(newTask(), LEASE);
      await expect(current().getTask(id, "")).rejects.toBeInstanceOf(RangeError);
      await expect(current().transitionTask(id, { kind: "request-cancel", principal: "", now: Date.now() })).rejects.toBeInstanceOf(RangeError);
    });

    it("keeps a parked call parked until it detaches, and detaches only while working", async () => {
      const task = newTask({ parked: true });
      expect(await current().createTask(task, LEASE)).toEqual(created(task));
      const asked = await current().transitionTask(task.id, { kind: "start-input", addInputRequests: { q: { method: "roots/list" } }, now: Date.now() });
      expect(asked).toMatchObject({ ok: true, task: { parked: true, status: "input_required" } });
      const early = await current().transitionTask(task.id, { kind: "detach", principal: "alice", now: Date.now() });
      expect(early).toMatchObject({ ok: false, reason: "wrong_status", task: { parked: true } });
      await current().transitionTask(task.id, { kind: "withdraw-input", removeInputRequests: ["q"], now: Date.now() });
      const unparked = await current().transitionTask(task.id, { kind: "detach", principal: "alice", now: Date.now() });
      expect(unparked).toMatchObject({ ok: true, task: { parked: false, status: "working" } });
      expect(await current().getTask(task.id, "alice")).toMatchObject({ parked: false });
    });

    it("refuses a second task with the same id", async () => {
      const task = newTask();
      await current().createTask(task, LEASE);
      await expect(current().createTask(task, LEASE)).rejects.toThrow(/exists/);
    });

    it("expires a task at createdAt + ttlMs, not ttlMs after it was written", async () => {
      // Created a minute ago with a TTL a little over a minute: gone within a fraction of a second.
      const task = newTask({ createdAt: Date.now() - 60_000, ttlMs: 60_400 });
      await current().createTask(task, LEASE);
      expect(await current().getTask(task.id, null)).toBeDefined();
      await waitFor(async () => (await current().getTask(task.id, null)) === undefined, { timeoutMs: 3_000, what: "the task to expire" });
      // Real time: the expiry is the store's own (Redis PEXPIREAT), so only the wall clock shows it was not early.
      expect(Date.now()).toBeGreaterThanOrEqual(task.createdAt + task.ttlMs);
    });

    describeTransitions(current);
    describeOutcomes(current);

    it("lists a principal's tasks newest first, in pages", async () => {
      const principal = `p-${randomUUID()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await current().createTask(newTask({ principal, createdAt: Date.now() + i }), LEASE)).id);
      await current().createTask(newTask(), LEASE);
      const first = await current().listTasks(principal, { limit: 2 });
      expect(first?.tasks.map((t) => t.id)).toEqual([ids[4], ids[3]]);
      const rest = await current().listTasks(principal, { limit: 10, cursor: first?.nextCursor });
      expect(rest?.tasks.map((t) => t.id)).toEqual([ids[2], ids[1], ids[0]]);
      expect(rest?.nextCursor).toBeUndefined();
      expect(await current().listTasks(principal, { limit: 2, cursor: "bogus" })).toBeUndefined();
    });

    it("lists every principal's tasks for operators, newest first, filtered by status, upstream and tool, in pages", async () => {
      const upstream = `u-${randomUUID()}`;
      const now = Date.now();
      const make = (i: number, tool: string, principal: string) => newTask({ upstream, tool, principal, createdAt: now + i });
      const tasks = [make(0, "sleep", "alice"), make(1, "deploy", "bob"), make(2, "sleep", "carol"), make(3, "sleep", "bob")];
      for (const task of tasks) await current().createTask(task, LEASE);
      await current().createTask(newTask(), LEASE); // another upstream: never listed below
      await current().transitionTask(tasks[2]!.id, { kind: "complete", outcome: { result: {} }, leaseToken: LEASE.token, now });
      const ids = (page?: { tasks: TaskRecord[] }) => page?.tasks.map((t) => t.id);

      expect(ids(await current().listAllTasks({ upstream }, { limit: 10 }))).toEqual([tasks[3]!.id, tasks[2]!.id, tasks[1]!.id, tasks[0]!.id]);
      const working = await current().listAllTasks({ upstream, status: ["working", "input_required"], tool: "sleep" }, { limit: 1 });
      expect(ids(working)).toEqual([tasks[3]!.id]);
      const next = await current().listAllTasks({ upstream, status: ["working", "input_required"], tool: "sleep" }, { limit: 5, cursor: working?.nextCursor });
      expect(ids(next)).toEqual([tasks[0]!.id]);
      expect(next?.nextCursor).toBeUndefined();
      expect(ids(await current().listAllTasks({ upstream, status: ["completed"] }, { limit: 10 }))).toEqual([tasks[2]!.id]);
      expect(await current().listAllTasks({}, { limit: 2, cursor: "bogus" })).toBeUndefined();
    });
  });
}

function describeTransitions(current: () => Store): void {
  it("moves from an allowed status, bumping the revision and lastUpdatedAt", async () => {
    const task = newTask();
    await current().createTask(task, LEASE);
    const now = task.createdAt + 5;
    const moved = await current().transitionTask(task.id, {
      kind: "start-input",
      addInputRequests: { q: { method: "roots/list" } },
      leaseToken: LEASE.token,
      now,
    });
    const expected = { ...created(task), status: "input_required", revision: 2, lastUpdatedAt: now, inputRequests: { q: { method: "roots/list" } } };
    expect(moved).toEqual({ ok: true, task: expected });
    expect(await current().getTask(task.id, "alice")).toEqual(expected);
  });

  it("refuses a transition from a status its rule does not start from, answering with the stored task", async () => {
    const task = newTask();
    await current().createTask(task, LEASE);
    const asked = await current().transitionTask(task.id, { kind: "start-input", addInputRequests: { q: { method: "roots/list" } }, now: Date.now() });
    if (!asked.ok) throw new Error(`question refused: ${asked.reason}`);
    // Only a working call detaches (TRANSITION_RULES.detach): this one has a question out.
    const refused = await current().transitionTask(task.id, { kind: "detach", now: Date.now() });
    expect(refused).toEqual({ ok: false, reason: "wrong_status", task: asked.task });
  });

  it("never leaves a terminal status, not even for itself", async () => {
    const { id } = await current().createTask(newTask(), LEASE);
    const done = await current().transitionTask(id, { kind: "complete", outcome: { result: { content: [] } }, now: Date.now() });
    if (!done.ok) throw new Error(`completion refused: ${done.reason}`);
    const attempts: TaskChange[] = [
      { kind: "withdraw-input", removeInputRequests: [], now: 0 },
      { kind: "complete", outcome: { result: {} }, now: 0 },
      { kind: "fail", now: 0 },
      { kind: "cancel", cancelRequested: true, now: 0 },
      { kind: "set-status-message", statusMessage: "late", now: 0 },
      { kind: "request-cancel", now: 0 },
      { kind: "start-input", addInputRequests: { q: { method: "roots/list" } }, now: 0 },
      { kind: "bind-upstream-task", upstreamTask: { taskId: "up" }, now: 0 },
      { kind: "detach", now: 0 },
    ];
    for (const attempt of attempts) {
      expect(await current().transitionTask(id, { ...attempt, now: Date.now() })).toEqual({ ok: false, reason: "wrong_status", task: done.task });
    }
    expect(await current().getTask(id, null)).toEqual(done.task);
  });

  it("refuses a stale lease token, answering with the stored task", async () => {
    const task = newTask();
    await current().createTask(task, LEASE);
    const stale = { kind: "fail" as const, now: Date.now() };
    expect(await current().transitionTask(task.id, { ...stale, leaseToken: "other" })).toEqual({ ok: false, reason: "stale_lease", task: created(task) });
    expect(
      (await current().transitionTask(task.id, { kind: "set-status-message", statusMessage: "still mine", leaseToken: LEASE.token, now: Date.now() })).ok,
    ).toBe(true);
  });

  it("reads a change by another principal exactly like one of an unknown task", async () => {
    const { id } = await current().createTask(newTask(), LEASE);
    const cancel = { kind: "request-cancel" as const, now: Date.now() };
    expect(await current().transitionTask(id, { ...cancel, principal: "mallory" })).toEqual({ ok: false, reason: "not_found" });
    expect(await current().transitionTask(randomUUID(), { ...cancel, principal: "alice" })).toEqual({ ok: false, reason: "not_found" });
    expect(await current().transitionTask(id, { ...cancel, principal: "alice" })).toMatchObject({ ok: true, task: { cancelRequested: true } });
  });

  it("sets, keeps and clears the statusMessage", async () => {
    const { id } = await current().createTask(newTask(), LEASE);
    const change = (statusMessage: string | null) =>
      current().transitionTask(id, { kind: "set-status-message", statusMessage, leaseToken: LEASE.token, now: Date.now() });
    expect(await change("Running tests (128/342)")).toMatchObject({ ok: true, task: { statusMessage: "Running tests (128/342)", revision: 2 } });
    // Another transition keeps it.
    const bound = await current().transitionTask(id, { kind: "bind-upstream-task", upstreamTask: { taskId: "up" }, leaseToken: LEASE.token, now: Date.now() });
    expect(bound).toMatchObject({ ok: true, task: { statusMessage: "Running tests (128/342)", revision: 3 } });
    const cleared = await change(null);
    expect(cleared.ok && "statusMessage" in cleared.task).toBe(false);
    expect(await current().getTask(id, null)).not.toHaveProperty("statusMessage");
  });
}

function describeOutcomes(current: () => Store): void {
  it("stores a result exactly as given: empty arrays and objects, nesting, big and odd values", async () => {
    const { id } = await current().createTask(newTask(), LEASE);
    const result = {
      content: [],
      structuredContent: { empty: {}, list: [], nested: { a: [{ b: {} }, [], [[]]] }, big: 2 ** 60, tiny: 1e-300, none: null, text: 'ünï ✓ "{}"' },
      isError: false,
    };
    const done = await current().transitionTask(id, { kind: "complete", outcome: { result }, leaseToken: LEASE.token, now: Date.now() });
    expect(done.ok && done.task.outcome).toEqual({ result });
    expect((await current().getTask(id, "alice"))?.outcome).toEqual({ result });
  });

  it("stores a JSON-RPC error outcome", async () => {
    const { id } = await current().createTask(newTask(), LEASE);
    const error = { code: -32000, message: "boom", data: { why: [1, 2], empty: [] } };
    const failed = await current().transitionTask(id, { kind: "fail", outcome: { error }, statusMessage: "boom", now: Date.now() });
    expect(failed).toMatchObject({ ok: true, task: { status: "failed", statusMessage: "boom" } });
    expect((await current().getTask(id, null))?.outcome).toEqual({ error });
  });
}
