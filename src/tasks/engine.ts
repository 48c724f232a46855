import type { LogContext } from "../observability/log-context.js";
import { refusedByShard, StoreUnconfirmedError, type NewTask, type Orphan, type TaskFilter, type TaskRecord, type TaskView } from "../store/contract.js";
import { RPC } from "../jsonrpc/codes.js";
import { Admission, type AdmittedCall } from "./admission.js";
import { adoptOrphan, drainOwned, resumeOrphan, resumeStreamOrphan } from "./handover.js";
import { OwnedCall } from "./owned-call.js";
import { principalChannel, watchPrincipal } from "./principal-watch.js";
import { Owner, waitingForOwner } from "./owner.js";
import { Reaper } from "./reaper.js";
import { RerunPolicy, type UpstreamEntry } from "./rerun-policy.js";
import { settle } from "./settle.js";
import { SyncCalls } from "./sync-call.js";
import { newTaskId } from "./task-id.js";
import { isTerminal } from "./transitions.js";
import { BatchedWrites } from "./batched-writes.js";
import { StoreFormatError } from "../store/format.js";
import { isToolCall, ShuttingDownError, type EngineDeps, type EngineParts, type TaskCall } from "./types.js";
import { withFields } from "../util/with-fields.js";

/**
 * The task engine: decides nothing about task protocols, only runs calls that may become tasks.
 * A task is written to the store before its handle is returned (durable creation, the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md), and
 * the replica that made it owns the upstream call until it ends.
 */
export class TaskEngine {
  private readonly owner: Owner;
  /** Calls still synchronous: inline, MRTR rounds, or detached into a task after `detachAfterMs`. */
  readonly sync: SyncCalls;
  private readonly admission: Admission;
  private readonly policy: RerunPolicy;
  private readonly reaper: Reaper;
  private draining = false;
  /** One function for every owned call's end, rather than a closure per call held. */
  private readonly ownedDone = (owned: OwnedCall) => {
    this.owner.remove(owned.task.id);
    void this.admission.release(owned.task.principal, owned.task.id);
  };

  private readonly deps: EngineDeps;

  constructor(parts: EngineParts) {
    const deps: EngineDeps = { ...parts, writes: new BatchedWrites(parts.store) };
    this.deps = deps;
    this.owner = new Owner(deps);
    this.admission = new Admission(deps.store, deps.audit, deps.options.maxActiveTasksPerPrincipal ?? 0, deps.clock);
    this.policy = new RerunPolicy(deps.options.maxAttempts, deps.clock);
    // A task the reaper ended, or a re-run that ended, no longer counts against its principal.
    const ended = (task: TaskRecord) => void this.admission.release(task.principal, task.id);
    const resume = async (orphan: Orphan) => {
      const { task } = orphan;
      const native = task.upstreamTaskId === undefined ? undefined : this.policy.native(task.upstream);
      const streams = this.policy.streams(task.upstream);
      if (native) await resumeOrphan(deps, this.owner, native, orphan, ended);
      else if (streams) await resumeStreamOrphan(deps, this.owner, streams, orphan, ended);
    };
    this.reaper = new Reaper(deps, this.policy, (orphan, message) => adoptOrphan(deps, this.owner, this.policy, orphan, message, ended), ended, resume);
    this.sync = new SyncCalls(
      deps,
      (call, parked, started) => this.create(call, parked, started),
      (id, owner) => this.owner.route(id, owner),
      (call) => this.release(call),
    );
  }

  /**
   * Give a call its task id and count it against its principal's limit (TaskLimitError when
   * full). detachNow does it itself; a front calls it first to refuse before anything is
   * started or streamed.
   */
  admit(call: TaskCall): Promise<AdmittedCall> {
    return this.admission.admit(call);
  }

  /** An upstream whose calls this engine may run again after their owner stopped. */
  addUpstream(name: string, entry: UpstreamEntry): void {
    this.policy.add(name, entry);
  }

  async start(): Promise<void> {
    await this.owner.start();
    this.reaper.start();
  }

  async stop(): Promise<void> {
    await this.reaper.stop();
    await this.owner.stop();
  }

  /**
   * SIGTERM: take no new task, give owned calls `drainMs`, then hand over what is left. Resolves
   * with the upstreams whose own tasks another replica now follows (their sessions must stay).
   */
  async drain(drainMs: number): Promise<Set<string>> {
    this.draining = true;
    await this.reaper.stop();
    const kept = await drainOwned(this.deps, this.owner, this.policy, drainMs);
    await this.owner.endLease();
    return kept;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Calls this replica owns that are or may become tasks: a parked prompts/get or resources/read never is one. */
  get ownedCount(): number {
    let count = 0;
    for (const call of this.owner.calls.values()) if (call.mayBeTask) count++;
    return count;
  }

  /** Make the task first, then start the call (policy `required`, or the 2025-11-25 tasks). */
  async detachNow(asked: TaskCall): Promise<TaskRecord> {
    if (this.draining) throw new ShuttingDownError();
    const call = await this.admission.admit(asked);
    const { owned, task } = await this.create(call);
    owned.run(call.caller.call(call.client, call.request, owned, owned.callOptions(call.ttlMs, call.principal)), call.maxDurationMs);
    return task;
  }

  /**
   * A client's lookup; a miss (unknown, expired or another principal's: one answer) is audited.
   * A parked call (an MRTR round, not yet detached) is no task of the client's: undefined.
   */
  get(taskId: string, principal: string | null, log?: LogContext): Promise<TaskRecord | undefined> {
    // A then, not an async function: every poll comes through here.
    return this.deps.store.getTask(taskId, principal).then((task) => this.audited(taskId, principal, task?.parked ? undefined : task, log));
  }

  /** What tasks/get renders of a task, as get() finds it; `withOutcome` when the answer carries the outcome (the tasks extension). */
  view(taskId: string, principal: string, withOutcome: boolean, log?: LogContext): Promise<TaskView | undefined> {
    return this.deps.store.viewTask(taskId, principal, withOutcome).then((task) => this.audited(taskId, principal, task?.parked ? undefined : task, log));
  }

  list(principal: string, page: { cursor?: string; limit: number }) {
    return this.deps.store.listTasks(principal, page);
  }

  /** Operators (admin API): every principal's tasks, filtered. */
  listAll(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    return this.deps.store.listAllTasks(filter, page);
  }

  /**
   * The tasks extension's cancel: recorded durably, then routed to the owner. Undefined for an unknown (or
   * another principal's) task; a terminal task is returned unchanged (cancel is harmless there).
   */
  async requestCancel(taskId: string, principal: string, log?: LogContext): Promise<TaskRecord | undefined> {
    const change = { kind: "request-cancel" as const, principal, now: this.deps.clock() };
    const result = await this.deps.store.transitionTask(taskId, change);
    if (!result.ok) return result.reason === "not_found" ? this.audited(taskId, principal, undefined, log) : result.task;
    this.deps.audit.record("task.cancel", principal, { taskId }, log);
    await this.owner.route(taskId, result.task.owner);
    return result.task;
  }

  /**
   * The 2025-11-25 tasks' cancel (the tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): the task is `cancelled` before the answer and stays so; the owner
   * then stops the upstream call. A terminal task is returned as `terminal` (the caller's -32602).
   */
  async cancelNow(taskId: string, principal: string, log?: LogContext): Promise<{ task: TaskRecord } | { terminal: TaskRecord } | undefined> {
    const change = {
      kind: "cancel" as const,
      cancelRequested: true as const,
      principal,
      statusMessage: "Client cancelled task execution.",
      now: this.deps.clock(),
    };
    const result = await this.deps.store.transitionTask(taskId, change);
    if (!result.ok) return result.reason === "not_found" ? this.audited(taskId, principal, undefined, log) : { terminal: result.task };
    const { upstream, tool, createdAt } = result.task;
    this.deps.metrics.taskEnded(upstream, tool, "cancelled", Math.max(0, change.now - createdAt) / 1000);
    this.deps.audit.record("task.cancel", principal, { taskId }, log);
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
  async answer(taskId: string, principal: string, responses: Record<string, unknown>, log?: LogContext): Promise<TaskRecord | undefined> {
    const written = await this.deps.store.addInputResponses(taskId, principal, responses, this.deps.clock());
    if (!written) return this.audited(taskId, principal, undefined, log);
    if (waitingForOwner(written)) await this.owner.route(taskId, written.task.owner);
    return written.task;
  }

  /**
   * Every change of a principal's tasks, from any replica, while the watch lasts (the 2025-11-25 tasks' GET
   * stream). Returns the function that ends it.
   */
  watchPrincipal(principal: string, onChange: (task: TaskRecord) => void): Promise<() => Promise<void>> {
    return watchPrincipal(this.deps.store, principal, onChange);
  }

  private audited<T>(taskId: string, principal: string | null, found: T | undefined, log: LogContext | undefined): T | undefined {
    if (found === undefined) this.deps.audit.record("task.lookup_failed", principal ?? undefined, { taskId: taskId.slice(0, 100) }, log);
    return found;
  }

  /** A call that ended inline no longer counts against its principal's task limit. */
  /** Undefined for a call that was never admitted: nothing to give back, no promise made. */
  private release(call: TaskCall | AdmittedCall): Promise<void> | undefined {
    return "taskId" in call ? this.admission.release(call.principal, call.taskId) : undefined;
  }

  /**
   * `started`: when the client's call began (performance.now()), for the time-to-detach
   * histogram. A parked call (MRTR) is not yet a task: it is counted when it detaches. A call
   * that was not admitted (an MRTR round of a client that cannot hold tasks) gets its id here
   * and is bounded by tasks.mrtrTimeoutMs instead of the task limit.
   */
  private async create(asked: TaskCall | AdmittedCall, parked = false, started = performance.now()): Promise<{ owned: OwnedCall; task: TaskRecord }> {
    const { store, options, clock } = this.deps;
    const now = clock();
    // Object.assign, not a spread: on Node 20 a spread of this many fields gives each copy a map
    // of its own, held as long as the call (task-fields.ts, decodeTask).
    let call: AdmittedCall = "taskId" in asked ? asked : Object.assign({}, asked, { taskId: newTaskId(now) });
    // A re-run sends tools/call: no other request is ever run again.
    const rerunnable = isToolCall(call) && (await this.policy.mayRerun(call.upstream, toolOf(call)));
    let token = "";
    let task: TaskRecord | undefined;
    for (let attempt = 1; !task; attempt++) {
      try {
        const refusal = this.deps.formatRefusal?.();
        if (refusal !== undefined) throw new StoreFormatError(refusal);
        token = this.owner.leaseToken();
        task = await store.createTask({ ...newTask(call, now, options.replicaId, rerunnable), parked }, { owner: options.replicaId, token });
      } catch (err) {
        if (attempt < CREATE_ATTEMPTS && store.sharded && elsewhere(err)) {
          // That id's shard refused the write or could not confirm it: a new id lives on another shard.
          this.deps.logger.warn(
            { err, taskId: call.taskId },
            "task not created: its shard of the store refused or could not confirm the write; trying a new id",
          );
          this.abandonUnconfirmed(call.taskId, token);
          call = await this.admission.moveTo(call, newTaskId(now));
          continue;
        }
        await this.admission.release(call.principal, call.taskId);
        throw err;
      }
    }
    if (!parked) this.announce(task, started, call.log);
    const owned = new OwnedCall(task, token, call, this.deps, this.ownedDone, started);
    this.owner.add(owned);
    return { owned, task };
  }

  /**
   * A create the store could not confirm may still be on the primary, a task nobody was told of:
   * ended at once where the store takes it, else it ends by its TTL (or the reaper, if this replica stops).
   */
  private abandonUnconfirmed(taskId: string, token: string): void {
    const message = "this task was never acknowledged: the store could not confirm its creation, and it was created again under another id";
    void this.deps.store
      .transitionTask(taskId, {
        kind: "fail",
        leaseToken: token,
        now: this.deps.clock(),
        statusMessage: message,
        outcome: { error: { code: RPC.INTERNAL_ERROR, message } },
      })
      .catch(() => undefined);
  }

  /** A new task, known to the client from now on: counted, logged, audited, announced. */
  private announce(task: TaskRecord, started: number, log: LogContext | undefined): void {
    const { store, metrics, logger, audit } = this.deps;
    metrics.taskCreated(task.upstream, task.tool);
    metrics.detached(task.upstream, (performance.now() - started) / 1000);
    logger.info(withFields(log, { taskId: task.id, upstream: task.upstream, tool: task.tool, taskProtocol: task.taskProtocol }), "task created");
    audit.record("task.create", task.principal, { taskId: task.id, tool: task.tool, taskProtocol: task.taskProtocol }, log);
    void store.bus.publish(principalChannel(task.principal), task.id).catch(() => undefined);
  }
}

/** A task create tried on this many ids at most (each a different shard, most likely). */
const CREATE_ATTEMPTS = 3;

/** The task's shard would not take the write, or not confirm it: another id may be on a shard that will. */
function elsewhere(err: unknown): boolean {
  return err instanceof StoreUnconfirmedError || refusedByShard(err);
}

/** The tool a task runs; a parked prompts/get or resources/read runs none (and is never a task). */
function toolOf(call: TaskCall): string {
  const tool = call.request.params?.name;
  return isToolCall(call) && typeof tool === "string" ? tool : "";
}

function newTask(call: AdmittedCall, now: number, owner: string, rerunnable: boolean): NewTask {
  const tool = toolOf(call);
  const args = call.request.params?.arguments;
  return {
    id: call.taskId,
    principal: call.principal,
    taskProtocol: call.taskProtocol,
    upstream: call.upstream,
    tool,
    status: "working",
    createdAt: now,
    ttlMs: call.ttlMs,
    pollIntervalMs: call.pollIntervalMs,
    owner,
    clientCapabilities: call.client.capabilities,
    ...(call.frontSession !== undefined ? { frontSession: call.frontSession } : {}),
    // Kept only where a live replica may run the call again if this one stops (opt-in, RerunPolicy).
    ...(rerunnable ? { requestParams: { name: tool, ...(args !== undefined ? { arguments: args } : {}) } } : {}),
  };
}
