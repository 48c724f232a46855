import type { JsonRpcResponse } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { taskChannel, type NewTask, type TaskRecord } from "../store/contract.js";
import { Admission, type AdmittedCall } from "./admission.js";
import { OwnedCall } from "./owned-call.js";
import { Owner } from "./owner.js";
import { SwitchSink } from "./sinks.js";
import { newLeaseToken } from "./task-id.js";
import { isTerminal, NON_TERMINAL } from "./transitions.js";
import type { EngineDeps, TaskCall } from "./types.js";

export type RaceOutcome = { inline: JsonRpcResponse } | { task: TaskRecord };

/**
 * The task engine: decides nothing about dialects, only runs calls that may become tasks.
 * A task is written to the store before its handle is returned (durable creation, §3.5), and
 * the replica that made it owns the upstream call until it ends.
 */
export class TaskEngine {
  private readonly owner: Owner;
  private readonly admission: Admission;

  constructor(private readonly deps: EngineDeps) {
    this.owner = new Owner(deps);
    this.admission = new Admission(deps.store, deps.audit, deps.options.maxActiveTasksPerPrincipal ?? 0, deps.clock);
  }

  /**
   * Give a call its task id and count it against its principal's limit (TaskLimitError when
   * full). raceOrDetach and detachNow do it themselves; a front calls it first to refuse before
   * anything is started or streamed.
   */
  admit(call: TaskCall): Promise<AdmittedCall> {
    return this.admission.admit(call);
  }

  start(): Promise<void> {
    return this.owner.start();
  }

  stop(): Promise<void> {
    return this.owner.stop();
  }

  get ownedCount(): number {
    return this.owner.calls.size;
  }

  /**
   * Call upstream; an answer within `detachAfterMs` is returned inline, else the call becomes a
   * task. With `detachOnInput`, a question from the upstream before that detaches at once: the
   * front wire cannot carry it, the task can (as input_required).
   */
  async raceOrDetach(asked: TaskCall, detachAfterMs: number, front: MessageSink, { detachOnInput = false } = {}): Promise<RaceOutcome> {
    const call = await this.admission.admit(asked);
    let inputArrived!: () => void;
    const input = new Promise<undefined>((resolve) => (inputArrived = () => resolve(undefined)));
    const sink = new SwitchSink(front, detachOnInput ? inputArrived : undefined);
    const running = call.caller.call(call.client, call.request, sink, { trackProgress: true });
    const early = await Promise.race([running, delay(detachAfterMs), input]);
    if (early) {
      await this.admission.release(call.principal, call.taskId);
      return { inline: early };
    }
    const owned = await this.create(call);
    sink.detachTo(owned.sink);
    owned.run(running);
    return { task: owned.task };
  }

  /** Make the task first, then start the call (policy `required`, or dialect A). */
  async detachNow(asked: TaskCall): Promise<TaskRecord> {
    const call = await this.admission.admit(asked);
    const owned = await this.create(call);
    owned.run(call.caller.call(call.client, call.request, owned.sink, { trackProgress: true }));
    return owned.task;
  }

  /** A client's lookup; a miss (unknown, expired or another principal's: one answer) is audited. */
  async get(taskId: string, principal: string | null): Promise<TaskRecord | undefined> {
    return this.audited(taskId, principal, await this.deps.store.getTask(taskId, principal));
  }

  list(principal: string, page: { cursor?: string; limit: number }) {
    return this.deps.store.listTasks(principal, page);
  }

  /**
   * Dialect B cancel: recorded durably, then routed to the owner. Undefined for an unknown (or
   * another principal's) task; a terminal task is returned unchanged (cancel is harmless there).
   */
  async requestCancel(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const change = { from: NON_TERMINAL, cancelRequested: true as const, principal, now: this.deps.clock() };
    const result = await this.deps.store.transitionTask(taskId, change);
    if (!result.ok) return result.reason === "not_found" ? this.audited(taskId, principal, undefined) : result.task;
    this.deps.audit.record("task.cancel", principal, { taskId });
    await this.owner.route(taskId, result.task.owner);
    return result.task;
  }

  /**
   * Dialect A cancel (§2.9): the task is `cancelled` before the answer and stays so; the owner
   * then stops the upstream call. A terminal task is returned as `terminal` (the caller's -32602).
   */
  async cancelNow(taskId: string, principal: string): Promise<{ task: TaskRecord } | { terminal: TaskRecord } | undefined> {
    const change = { from: NON_TERMINAL, to: "cancelled" as const, cancelRequested: true as const, principal, statusMessage: "Client cancelled task execution.", now: this.deps.clock() };
    const result = await this.deps.store.transitionTask(taskId, change);
    if (!result.ok) return result.reason === "not_found" ? this.audited(taskId, principal, undefined) : { terminal: result.task };
    this.deps.audit.record("task.cancel", principal, { taskId });
    await this.owner.route(taskId, result.task.owner);
    return { task: result.task };
  }

  /**
   * Follow a task until it is terminal, on any replica: woken by the bus, re-reading the store
   * each time (the hint only wakes), with a slow poll behind it so a lost hint only delays.
   * `onChange` sees every new revision. Undefined when the task is unknown or expires.
   */
  async follow(taskId: string, principal: string, onChange: (task: TaskRecord) => void, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    let dirty = false;
    let wake: () => void = () => undefined;
    const unsubscribe = await this.deps.store.bus.subscribe(taskChannel(taskId), () => {
      dirty = true;
      wake();
    });
    try {
      let revision = -1;
      while (!signal?.aborted) {
        dirty = false;
        const task = await this.deps.store.getTask(taskId, principal);
        if (!task) return undefined;
        if (task.revision !== revision) onChange(task);
        revision = task.revision;
        if (isTerminal(task.status)) return task;
        if (!dirty) await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 2_000).unref();
          signal?.addEventListener("abort", () => resolve(), { once: true });
        });
      }
      return undefined;
    } finally {
      await unsubscribe();
    }
  }

  /**
   * tasks/update: answers are written durably first (only outstanding keys count; the rest are
   * ignored, so retries are safe), then routed to the owner. Undefined for an unknown task.
   */
  async answer(taskId: string, principal: string, responses: Record<string, unknown>): Promise<TaskRecord | undefined> {
    const written = await this.deps.store.addInputResponses(taskId, principal, responses, this.deps.clock());
    if (!written) return this.audited(taskId, principal, undefined);
    if (written.accepted.length > 0) await this.owner.route(taskId, written.task.owner);
    return written.task;
  }

  /**
   * Every change of a principal's tasks, from any replica, while the watch lasts: tasks that are
   * running when it starts, and those created after (announced on the principal's channel).
   * For dialect A's GET stream (notifications/tasks/status). Returns the function that ends it.
   */
  async watchPrincipal(principal: string, onChange: (task: TaskRecord) => void): Promise<() => Promise<void>> {
    const { bus } = this.deps.store;
    const followed = new Map<string, Promise<() => Promise<void>>>();
    const push = async (taskId: string) => {
      const task = await this.deps.store.getTask(taskId, principal).catch(() => undefined);
      if (task) onChange(task);
      if (!task || isTerminal(task.status)) void followed.get(taskId)?.then((stop) => stop());
    };
    const follow = (taskId: string) => {
      if (!followed.has(taskId)) followed.set(taskId, bus.subscribe(taskChannel(taskId), () => void push(taskId)));
    };
    const stopNew = await bus.subscribe(principalChannel(principal), (taskId) => {
      follow(taskId);
      void push(taskId);
    });
    const running = await this.deps.store.listTasks(principal, { limit: 100 }).catch(() => undefined);
    for (const task of running?.tasks ?? []) if (!isTerminal(task.status)) follow(task.id);
    return async () => {
      await stopNew();
      await Promise.all([...followed.values()].map(async (stop) => (await stop)()));
    };
  }

  private audited<T>(taskId: string, principal: string | null, found: T | undefined): T | undefined {
    if (found === undefined) this.deps.audit.record("task.lookup_failed", principal ?? undefined, { taskId: taskId.slice(0, 100) });
    return found;
  }

  private async create(call: AdmittedCall): Promise<OwnedCall> {
    const { store, options, clock } = this.deps;
    const now = clock();
    const token = newLeaseToken();
    const lease = { owner: options.replicaId, token, leaseMs: options.leaseMs };
    const task = await store.createTask(newTask(call, now, options.replicaId), lease).catch(async (err: unknown) => {
      await this.admission.release(call.principal, call.taskId);
      throw err;
    });
    this.deps.audit.record("task.create", task.principal, { taskId: task.id, tool: task.tool, dialect: task.dialect });
    await store.bus.publish(principalChannel(task.principal), task.id).catch(() => undefined);
    const owned = new OwnedCall(task, token, call, this.deps, (id) => {
      this.owner.remove(id);
      void this.admission.release(task.principal, id);
    });
    this.owner.add(owned);
    return owned;
  }
}

function newTask(call: AdmittedCall, now: number, owner: string): NewTask {
  const tool = call.request.params?.name;
  return {
    id: call.taskId,
    principal: call.principal,
    dialect: call.dialect,
    upstream: call.upstream,
    tool: typeof tool === "string" ? tool : "",
    status: "working",
    createdAt: now,
    ttlMs: call.ttlMs,
    pollIntervalMs: call.pollIntervalMs,
    owner,
    clientCapabilities: call.client.capabilities,
  };
}

/** Where a principal's new tasks are announced (a hint; the store has the truth). */
const principalChannel = (principal: string) => `principal:${principal}`;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}
