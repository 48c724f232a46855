import { taskChannel, type NewTask, type TaskFilter, type TaskRecord } from "../store/contract.js";
import { OwnedCall } from "./owned-call.js";
import { Owner } from "./owner.js";
import { settle } from "./settle.js";
import { SyncCalls } from "./sync-call.js";
import { newLeaseToken, newTaskId } from "./task-id.js";
import { isTerminal, NON_TERMINAL } from "./transitions.js";
import type { EngineDeps, TaskCall } from "./types.js";

/**
 * The task engine: decides nothing about dialects, only runs calls that may become tasks.
 * A task is written to the store before its handle is returned (durable creation, §3.5), and
 * the replica that made it owns the upstream call until it ends.
 */
export class TaskEngine {
  private readonly owner: Owner;
  /** Calls still synchronous: inline, MRTR rounds, or detached into a task after `detachAfterMs`. */
  readonly sync: SyncCalls;

  constructor(private readonly deps: EngineDeps) {
    this.owner = new Owner(deps);
    this.sync = new SyncCalls(deps, (call, parked, started) => this.create(call, parked, started), (id, owner) => this.owner.route(id, owner));
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

  /** Make the task first, then start the call (policy `required`, or dialect A). */
  async detachNow(call: TaskCall): Promise<TaskRecord> {
    const owned = await this.create(call);
    owned.run(call.caller.call(call.client, call.request, owned.sink, { trackProgress: true }));
    return owned.task;
  }

  /** A parked call (an MRTR round, not yet detached) is no task of the client's: undefined. */
  async get(taskId: string, principal: string | null): Promise<TaskRecord | undefined> {
    const task = await this.deps.store.getTask(taskId, principal);
    return task?.parked ? undefined : task;
  }

  list(principal: string, page: { cursor?: string; limit: number }) {
    return this.deps.store.listTasks(principal, page);
  }

  /** Operators (admin API): every principal's tasks, filtered. */
  listAll(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    return this.deps.store.listAllTasks(filter, page);
  }

  /**
   * Dialect B cancel: recorded durably, then routed to the owner. Undefined for an unknown (or
   * another principal's) task; a terminal task is returned unchanged (cancel is harmless there).
   */
  async requestCancel(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    const change = { from: NON_TERMINAL, cancelRequested: true as const, principal, now: this.deps.clock() };
    const result = await this.deps.store.transitionTask(taskId, change);
    if (!result.ok) return result.reason === "not_found" ? undefined : result.task;
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
    if (!result.ok) return result.reason === "not_found" ? undefined : { terminal: result.task };
    this.deps.metrics.taskEnded(result.task.upstream, result.task.tool, "cancelled");
    await this.owner.route(taskId, result.task.owner);
    return { task: result.task };
  }

  /**
   * Follow a task until it is terminal, on any replica: woken by the bus, re-reading the store
   * each time (the hint only wakes), with a slow poll behind it so a lost hint only delays.
   * `onChange` sees every new revision. Undefined when the task is unknown or expires.
   */
  async follow(taskId: string, principal: string, onChange: (task: TaskRecord) => void, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    let revision = -1;
    const end = await settle<TaskRecord | "gone">(
      this.deps.store,
      taskId,
      principal,
      (task) => {
        if (!task) return "gone";
        if (task.revision !== revision) onChange(task);
        revision = task.revision;
        return isTerminal(task.status) ? task : undefined;
      },
      signal ? { clock: this.deps.clock, signal } : { clock: this.deps.clock },
    );
    return end === "gone" ? undefined : end;
  }

  /**
   * tasks/update: answers are written durably first (only outstanding keys count; the rest are
   * ignored, so retries are safe), then routed to the owner. Undefined for an unknown task.
   */
  async answer(taskId: string, principal: string, responses: Record<string, unknown>): Promise<TaskRecord | undefined> {
    const written = await this.deps.store.addInputResponses(taskId, principal, responses, this.deps.clock());
    if (!written) return undefined;
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

  /**
   * `started`: when the client's call began (performance.now()), for the time-to-detach
   * histogram. A parked call (MRTR) is not yet a task: it is counted when it detaches.
   */
  private async create(call: TaskCall, parked = false, started = performance.now()): Promise<OwnedCall> {
    const { store, options, clock, metrics, logger } = this.deps;
    const now = clock();
    const token = newLeaseToken();
    const task = await store.createTask({ ...newTask(call, now, options.replicaId), parked }, { owner: options.replicaId, token, leaseMs: options.leaseMs });
    if (!parked) {
      metrics.taskCreated(task.upstream, task.tool);
      metrics.detached(task.upstream, (performance.now() - started) / 1000);
      logger.info({ taskId: task.id, upstream: task.upstream, tool: task.tool, dialect: task.dialect }, "task created");
      await store.bus.publish(principalChannel(task.principal), task.id).catch(() => undefined);
    }
    const owned = new OwnedCall(task, token, call, this.deps, (id) => this.owner.remove(id));
    this.owner.add(owned);
    return owned;
  }
}

function newTask(call: TaskCall, now: number, owner: string): NewTask {
  const tool = call.request.params?.name;
  return {
    id: newTaskId(now),
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
