import type { LogContext } from "../observability/log-context.js";
import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import type { NewTask, TaskChange, TaskEnding, TaskOutcome, TaskRecord, TransitionResult } from "../store/contract.js";
import type { TerminalStatus } from "../store/task-rules.js";
import { CANCELLED_CODE, QUEUED_NOTICE, STREAM_NOTICE, type CallClient, type CallOptions, type QueueWait, type UpstreamCaller } from "../upstream/caller.js";
import { InputBridge } from "./input-bridge.js";
import { bindingOf } from "./native/binding.js";
import { cancelledUpstream, UPSTREAM_STATUS_NOTICE, UPSTREAM_TASK_NOTICE } from "./native/notices.js";
import { statusFromProgress, Throttle } from "./status-message.js";
import { retryWhileUnavailable } from "./store-retry.js";
import { taskCallOptions, type EngineDeps, type TaskCall } from "./types.js";
import { RPC } from "../jsonrpc/codes.js";
import { TASKS_2025_VERSION } from "../jsonrpc/versions.js";
import { withFields } from "../util/with-fields.js";

interface Ending {
  to: TerminalStatus;
  outcome?: TaskOutcome;
  statusMessage?: string;
}

/** The named transition that writes each ending. */
const ENDING_KIND = { completed: "complete", failed: "fail", cancelled: "cancel" } as const satisfies Record<TerminalStatus, TaskChange["kind"]>;

/**
 * What an owned call keeps of its task record: what its writes, logs, metrics, question bounds
 * and hand-over read. The whole record (capabilities, input maps, revision, …) is the store's.
 */
export type OwnedTask = Pick<
  TaskRecord,
  "id" | "principal" | "taskProtocol" | "upstream" | "tool" | "createdAt" | "ttlMs" | "pollIntervalMs" | "attempt" | "parked" | "requestParams"
>;

/** Told once the call has ended and its outcome is written (or could not be): one function for all calls. */
export type OwnedCallDone = (call: OwnedCall) => void;

/**
 * A detached upstream call held by this replica. It alone writes the call's outcome, fenced by
 * the token of the replica lease it holds the task under; when that lease lapses (or another
 * replica claimed the task) it stops writing and abandons the call.
 *
 * It is also the sink of its upstream call's messages: progress becomes statusMessage,
 * server→client requests become input. A replica holds one of these per call in flight (10,000
 * or more), so it keeps only what it reads later, made nothing per call it can share
 * (no closures, no copy of the request or of the task record), and makes the rest on first use.
 */
export class OwnedCall implements MessageSink {
  readonly task: OwnedTask;
  readonly caller: UpstreamCaller;
  readonly client: CallClient;
  private readonly requestId: JsonRpcRequest["id"];
  private readonly isTool: boolean;
  private cancelling = false;
  private failReason?: string;
  private lost = false;
  /** Set when the call's own outcome is about to be written: from then on, only that write says whether the lease held. */
  private ending = false;
  private timers?: NodeJS.Timeout[];
  // Both made on first use: most calls send no progress and ask nothing.
  private throttle?: Throttle;
  private input?: InputBridge;
  /** The upstream task the call runs as, once known: another replica may follow it after this one. */
  upstreamTaskId?: string;
  /** The task's life, shortened to what the upstream keeps of its own task. */
  private ttlMs: number;
  /** The call's response stream can be resumed by another replica, and the task says from where. */
  resumable = false;
  /** A status write is in flight (null), with the newest message to write after it (a string). */
  private statusNext?: string | null;

  /** The front request that made the call, for the task's lines. */
  private readonly log: LogContext | undefined;
  /** How long the call may wait in its upstream's queue, and what it awaits before it starts (set by the engine). */
  queueWait?: QueueWait;
  /** The tools/call params, kept with the task while it waits in the queue (the request's own object, no copy). */
  private readonly params: Record<string, unknown> | undefined;
  /** The write marking the task queued in the store (true: it landed); set once, when the call first waits. */
  private queueMark?: Promise<boolean>;
  private queuedDurably = false;
  /** It got its slot: marked started, or being marked. */
  private starting = false;
  /** Waiting for a slot right now (as its queue last said). */
  private waiting = false;
  /** maxDurationMs, held while the call waits: it bounds the run, not the wait (started when the call leaves the queue). */
  private maxDurationMs?: number;
  /** The params stay with the task after it starts: re-runs after a stopped owner need them. */
  private readonly keepParams: boolean;

  constructor(
    record: TaskRecord,
    readonly token: string,
    call: TaskCall,
    private readonly deps: EngineDeps,
    private readonly done: OwnedCallDone,
    /** When the client's call arrived (performance.now()), where this replica saw it; else the task's createdAt counts. */
    private readonly startedAt?: number,
  ) {
    this.task = ownedTask(record);
    this.caller = call.caller;
    this.client = call.client;
    this.requestId = call.request.id;
    this.log = call.log;
    this.isTool = call.request.method === "tools/call";
    this.ttlMs = record.ttlMs;
    if (record.upstreamTaskId !== undefined) this.upstreamTaskId = record.upstreamTaskId;
    if (record.lastEventId !== undefined) this.resumable = true;
    this.params = this.isTool ? call.request.params : undefined;
    this.keepParams = record.requestParams !== undefined && record.queued !== true;
    // Queued again here after its owner stopped while it waited: the store says so already.
    if (record.queued) {
      this.queueMark = Promise.resolve(true);
      this.queuedDurably = true;
    }
  }

  /** The options the call runs with: a task's wait in the queue, and its start marked first when it was queued. */
  callOptions(ttlMs: number, principal: string, ttlLeftMs = ttlMs): CallOptions {
    const options = taskCallOptions(ttlMs, principal, ttlLeftMs);
    this.attachQueue(options.queueWait as QueueWait);
    return options;
  }

  /** The call's place in the queue: it may start only once the store no longer says queued. */
  attachQueue(wait: QueueWait): void {
    this.queueWait = wait;
    if (this.queueMark) wait.beforeStart = () => this.startQueued();
  }

  /** Waiting in the queue, and the store knows it: another replica can queue it again. */
  get isQueued(): boolean {
    return this.queuedDurably && !this.starting;
  }

  /** Messages of the running call: the task answers questions and turns progress into statusMessage. */
  send(message: JsonRpcMessage): boolean {
    if (isRequest(message)) {
      this.inputBridge().offer(message);
      return true;
    }
    if (!isNotification(message)) return true;
    if (message.method === "notifications/progress") this.progress(message.params ?? {});
    // Where the call stands in its upstream's queue.
    else if (message.method === QUEUED_NOTICE) {
      this.waiting = typeof message.params?.ahead === "number";
      if (this.waiting) this.markQueued();
      else if (this.maxDurationMs !== undefined) this.bound(this.maxDurationMs);
      this.progress({ message: queueStatus(message.params?.ahead) });
    } else if (message.method === UPSTREAM_TASK_NOTICE) this.bind(message.params ?? {});
    // The upstream task's own statusMessage is the task's.
    else if (message.method === UPSTREAM_STATUS_NOTICE) this.progress({ message: message.params?.statusMessage });
    else if (message.method === STREAM_NOTICE) this.bindStream(message.params ?? {});
    // Logging and other notifications have nobody to go to once detached (not supported for tasks, the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
    return true;
  }

  /** Only a tools/call may become a task; a parked prompts/get or resources/read stays the client's request. */
  get mayBeTask(): boolean {
    return this.isTool;
  }

  /** Answers may be waiting in the store (a hint, or a flag a lease renewal took, said so); only a call that asked waits for any. */
  deliverInput(): void {
    // Retried while the store is away: an answer taken by a take whose reply was lost comes back.
    const input = this.input;
    if (!input) return;
    void retryWhileUnavailable(
      () => input.deliver(),
      () => input.waiting && !this.lost,
    ).catch((err: unknown) => this.deps.logger.warn({ err, taskId: this.task.id }, "could not deliver input answers"));
  }

  /** Follow the running upstream call to its end; `maxDurationMs` bounds it from when it leaves the queue. */
  run(response: Promise<JsonRpcResponse>, maxDurationMs?: number): void {
    if (maxDurationMs !== undefined && this.waiting) this.maxDurationMs = maxDurationMs;
    else if (maxDurationMs !== undefined) this.bound(maxDurationMs);
    void response.then((r) => this.finish(r));
  }

  /** tasks/cancel reached the owner: ask the upstream to stop, give a result `cancelGraceMs` to win. */
  requestCancel(): void {
    if (this.cancelling) return;
    this.cancelling = true;
    void this.caller.cancel(this.client, this.requestId, "task cancelled", { abandon: false });
    this.later(this.deps.options.cancelGraceMs, () => void this.caller.cancel(this.client, this.requestId, "task cancelled"));
  }

  /**
   * The replica's lease lapsed. A call that is writing its outcome lets that write decide: fenced
   * by the token, it lands unless another replica claimed the task meanwhile (`write`).
   */
  renewalRefused(): void {
    if (!this.ending) this.leaseLost();
  }

  /** The lease is gone (another replica may own the task now): never write again. */
  leaseLost(): void {
    if (this.lost) return;
    this.lost = true;
    this.countLoss();
    this.deps.logger.warn({ taskId: this.task.id }, "lease lost: abandoning the local upstream call without writing its outcome");
    // An upstream task of the upstream's own goes on: the replica holding the lease now follows it.
    void this.caller.cancel(this.client, this.requestId, "owner lost its lease", { keepUpstreamTask: true });
  }

  /**
   * Shutdown, after the drain period: either fail the task now with `message`, or leave it to the
   * reaper of a live replica, which runs the call again or follows what it started (`release`,
   * only where that is allowed) once this replica ends its lease. Either way this run writes
   * nothing more, and the upstream call is cancelled.
   */
  async handOver(release: boolean, message: string): Promise<void> {
    if (this.lost) return;
    this.lost = true;
    this.timers?.forEach(clearTimeout);
    this.throttle?.stop();
    this.input?.close();
    try {
      if (!release) await this.write({ to: "failed", outcome: { error: { code: RPC.INTERNAL_ERROR, message } }, statusMessage: message });
    } finally {
      void this.caller.cancel(this.client, this.requestId, "taskgate is shutting down", { keepUpstreamTask: release });
    }
  }

  /**
   * The call waits for a slot: the task is marked queued with the params it would send, one
   * write when it first waits (its place is told as statusMessage), so that if this replica
   * stops, a live one queues it again: nothing of it ran.
   */
  private markQueued(): void {
    const params = this.params;
    if (this.queueMark || this.starting || this.lost || this.task.parked || params === undefined) return;
    const change = { kind: "queue" as const, requestParams: params, leaseToken: this.token, now: 0 };
    this.queueMark = retryWhileUnavailable(
      () => this.deps.store.transitionTask(this.task.id, { ...change, now: this.deps.clock() }),
      () => !this.lost && !this.ending,
    ).then(
      (result) => {
        const marked = result?.ok === true;
        this.queuedDurably = marked && !this.starting;
        return marked;
      },
      (err: unknown) => {
        this.deps.logger.warn({ err, taskId: this.task.id }, "could not mark a queued task in the store");
        return false;
      },
    );
    if (this.queueWait) this.queueWait.beforeStart = () => this.startQueued();
  }

  /**
   * The queued call has its slot: the store hears it started before the upstream hears of it.
   * False when it must not start: the lease is gone, or the task ended (cancelled) meanwhile.
   */
  private async startQueued(): Promise<boolean> {
    this.starting = true;
    this.queuedDurably = false;
    const marked = await this.queueMark;
    if (this.lost) return false;
    if (!marked) return true;
    const change = { kind: "start-queued" as const, keepParams: this.keepParams, leaseToken: this.token, now: 0 };
    const result = await retryWhileUnavailable(
      () => this.deps.store.transitionTask(this.task.id, { ...change, now: this.deps.clock() }),
      () => !this.lost,
    ).catch((err: unknown) => {
      this.deps.logger.warn({ err, taskId: this.task.id }, "could not mark a queued task started");
      return undefined;
    });
    return result?.ok === true && !this.lost;
  }

  /**
   * The store lost this task's record while the call runs (found by the owner's check): logged at
   * error level, counted, the call cancelled, and the record written again as failed saying so,
   * so a poll of the id says what happened instead of "not found". Not while the call is ending:
   * its outcome write finds the loss itself and restores the record with the outcome (`write`).
   */
  async recordLost(): Promise<void> {
    if (this.lost || this.ending || this.expired) return;
    this.lost = true;
    this.timers?.forEach(clearTimeout);
    this.throttle?.stop();
    this.input?.close();
    this.reportLost("the owner's check found it missing");
    void this.caller.cancel(this.client, this.requestId, "the task's record was lost by the task store");
    try {
      await this.restore({ to: "failed", outcome: { error: { code: RPC.INTERNAL_ERROR, message: RECORD_LOST } }, statusMessage: RECORD_LOST });
    } catch (err) {
      this.deps.logger.error({ err, taskId: this.task.id }, "could not write again the record of a task the store lost");
    }
  }

  private reportLost(how: string): void {
    const { id: taskId, upstream, tool } = this.task;
    this.deps.metrics.taskRecordLost(upstream);
    this.deps.logger.error({ ...this.log, taskId, upstream, tool, how }, "the task store lost the record of a task whose call this replica runs");
  }

  /** Past its TTL a task's record is gone by design, not lost. */
  private get expired(): boolean {
    return this.deps.clock() >= this.task.createdAt + this.ttlMs;
  }

  /** The task written again under this call's lease, then ended as `end` says (terminal from then on). */
  private async restore(end: Ending): Promise<void> {
    const t = this.task;
    const task: NewTask = {
      id: t.id,
      principal: t.principal,
      taskProtocol: t.taskProtocol,
      upstream: t.upstream,
      tool: t.tool,
      status: "working",
      createdAt: t.createdAt,
      ttlMs: this.ttlMs,
      pollIntervalMs: t.pollIntervalMs,
      owner: this.deps.options.replicaId,
      clientCapabilities: this.client.capabilities,
    };
    await retryWhileUnavailable(
      () =>
        this.deps.store
          .createTask(task, { owner: task.owner, token: this.token })
          .catch((err: unknown) => (isTaskExists(err) ? undefined : Promise.reject(err))),
      () => !this.expired,
    );
    await retryWhileUnavailable(
      () => this.deps.store.transitionTask(t.id, endingChange(end, this.token, this.deps.clock())),
      () => !this.expired,
    );
    this.ended(end);
  }

  private countLoss(): void {
    this.deps.metrics.leaseLost();
  }

  /**
   * A question went unanswered past tasks.inputTimeoutMs: the task fails with that reason
   * whatever the upstream answers now, and the upstream is asked to stop (a cancel, then the
   * call is abandoned after cancelGraceMs, as for tasks/cancel).
   */
  private inputTimedOut(reason: string): void {
    if (this.failReason !== undefined) return;
    this.failReason = reason;
    void this.caller.cancel(this.client, this.requestId, reason, { abandon: false });
    this.later(this.deps.options.cancelGraceMs, () => void this.caller.cancel(this.client, this.requestId, reason));
  }

  /** A method of its own, so the closure of run() (held as long as the call) captures nothing else. */
  private bound(maxDurationMs: number): void {
    this.maxDurationMs = undefined;
    this.later(maxDurationMs, () => {
      this.failReason = `the call ran longer than its maxDurationMs (${maxDurationMs} ms)`;
      void this.caller.cancel(this.client, this.requestId, this.failReason);
    });
  }

  private progress(params: Record<string, unknown>): void {
    const message = statusFromProgress(params);
    if (!message) return;
    this.throttle ??= new Throttle(this.deps.options.statusWriteIntervalMs, (m) => void this.writeStatus(m));
    this.throttle.push(message);
  }

  private async finish(response: JsonRpcResponse): Promise<void> {
    this.ending = true;
    this.timers?.forEach(clearTimeout);
    // The last progress the upstream sent, even if the throttle held it back: it goes out with
    // the terminal write, in the same store call.
    const progress = this.throttle?.stop();
    this.input?.close();
    try {
      await this.writeUntilStored(storable(this.endingOf(response, progress), this.deps.options.maxResultBytes)).catch((err: unknown) =>
        // Not the store being away (that is retried): this outcome cannot be written. The task
        // fails now saying so, rather than waiting for the reaper to blame a stopped replica.
        this.writeUntilStored(failedWith(`the outcome could not be stored: ${err instanceof Error ? err.message : String(err)}`)),
      );
    } catch (err) {
      this.deps.logger.error({ err, taskId: this.task.id }, "could not write the outcome of a task");
    } finally {
      this.done(this);
    }
  }

  /**
   * The outcome is what the client is waiting for: while the store is away, keep trying (the
   * lease renewals go on meanwhile). Only a lost lease ends the attempts: then the reaper (or
   * the replica that took over) decides what the task says.
   */
  private async writeUntilStored(end: Ending): Promise<void> {
    if (this.lost) return;
    let again = false;
    const attempt = () => this.write(end, again).finally(() => (again = true));
    const written = await retryWhileUnavailable(
      () => attempt().then(() => true),
      () => !this.lost,
    );
    if (!written) this.deps.logger.warn({ taskId: this.task.id }, "outcome not written: the lease was lost while the store was unavailable");
  }

  /** `again`: an earlier try of this same write got no answer in time, so it may have been applied. */
  private async write(end: Ending, again = false): Promise<void> {
    const change: TaskChange & TaskEnding = { kind: ENDING_KIND[end.to], leaseToken: this.token, now: this.deps.clock() };
    if (end.outcome) change.outcome = end.outcome;
    if (this.ttlMs < this.task.ttlMs) change.ttlMs = this.ttlMs;
    if (end.statusMessage !== undefined) change.statusMessage = end.statusMessage;
    const result = await this.deps.writes.write(this.task.id, change);
    if (!result.ok && result.reason === "not_found" && !this.lost && !this.task.parked && !this.expired) {
      // The store lost the record while the call ran; its outcome is here: written again with it.
      this.lost = true;
      this.reportLost("its outcome write found it missing");
      return this.restore({ ...end, statusMessage: RECORD_RESTORED });
    }
    const ended = result.ok ? result.task : again ? endedByEarlierTry(result, end) : undefined;
    // A call that ends while still parked was never a task (nor counted or audited as created).
    if (ended && !ended.parked) {
      this.ended(end);
      this.deps.audit.record("task.end", this.task.principal, { taskId: this.task.id, status: ended.status }, this.log);
    }
    if (!result.ok && result.reason === "stale_lease" && !this.lost) {
      // The lease moved on before this call could write its outcome: a real loss.
      this.lost = true;
      this.countLoss();
      this.deps.logger.warn({ taskId: this.task.id }, "lease lost: outcome refused, another replica holds the task now");
    }
  }

  /** The task's whole life, from the call's arrival (before it detached) to its end: the line's `ms` and the lifetime histogram. */
  private ended(end: Ending): void {
    const { upstream, tool, taskProtocol, id: taskId } = this.task;
    const ms = this.startedAt !== undefined ? performance.now() - this.startedAt : Math.max(0, this.deps.clock() - this.task.createdAt);
    this.deps.metrics.taskEnded(upstream, tool, end.to, ms / 1000);
    this.deps.logger.info(withFields(this.log, { taskId, upstream, tool, taskProtocol, status: end.to, ms: Math.round(ms) }), "task ended");
  }

  private endingOf(response: JsonRpcResponse, progress: string | undefined): Ending {
    if (this.failReason) return { to: "failed", outcome: { error: { code: RPC.INTERNAL_ERROR, message: this.failReason } }, statusMessage: this.failReason };
    if ("error" in response) {
      if (response.error.code === CANCELLED_CODE && this.cancelling) return { to: "cancelled", statusMessage: "Cancelled at the client's request" };
      // The upstream ended its own task cancelled: so does the front task.
      if (cancelledUpstream(response.error)) return { to: "cancelled", statusMessage: response.error.message };
      return { to: "failed", outcome: { error: response.error }, statusMessage: response.error.message };
    }
    // The 2025-11-25 tasks count an isError result as failed (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Task Status); the tasks extension as completed (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
    if (this.task.taskProtocol === TASKS_2025_VERSION && response.result.isError === true)
      return { to: "failed", outcome: { result: response.result }, statusMessage: "The tool reported an error" };
    return progress === undefined
      ? { to: "completed", outcome: { result: response.result } }
      : { to: "completed", outcome: { result: response.result }, statusMessage: progress };
  }

  /**
   * One status write of this call waits at a time: while the store is slow, the newest message
   * waits here in its place (`statusNext`), so what is queued for the store is bounded by the
   * calls owned, whatever the upstream's progress rate. Once the call ends, its outcome write
   * carries the last message and nothing more is written here.
   */
  private async writeStatus(statusMessage: string): Promise<void> {
    if (this.lost || this.ending) return;
    if (this.statusNext !== undefined) {
      this.statusNext = statusMessage;
      return;
    }
    this.statusNext = null;
    const change = { kind: "set-status-message" as const, statusMessage, leaseToken: this.token, now: this.deps.clock() };
    await this.deps.writes.write(this.task.id, change).catch((err: unknown) => {
      this.deps.logger.debug({ err, taskId: this.task.id }, "statusMessage write failed");
    });
    const next = this.statusNext;
    this.statusNext = undefined;
    if (typeof next === "string") await this.writeStatus(next);
  }

  /**
   * The call runs as the upstream's own task: that task is stored with the front task (so
   * another replica can follow it), and the front task lives no longer than the upstream keeps it.
   */
  private bind(params: Record<string, unknown>): void {
    const binding = bindingOf(this.task, params);
    if (!binding || this.lost) return;
    this.upstreamTaskId = binding.ref.taskId;
    if (binding.ttlMs !== undefined) this.ttlMs = binding.ttlMs;
    const change: TaskChange & { kind: "bind-upstream-task" } = { kind: "bind-upstream-task", upstreamTask: binding.ref, leaseToken: this.token, now: 0 };
    if (binding.ttlMs !== undefined) change.ttlMs = binding.ttlMs;
    void retryWhileUnavailable(
      () => this.deps.store.transitionTask(this.task.id, { ...change, now: this.deps.clock() }),
      () => !this.lost && !this.ending,
    ).catch((err: unknown) => this.deps.logger.warn({ err, taskId: this.task.id }, "could not store the upstream task a call runs as"));
  }

  /**
   * The call's response stream carries event ids: where it can be resumed is written once, the
   * first id (the priming event's), from which the upstream replays the whole stream. Later ids
   * are never written: each would be a store write per event, and the spec lets a server replay
   * from any id it gave on that stream (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
   * Resumability and Redelivery). A task that has a position (a resumed call) keeps it.
   */
  private bindStream(params: Record<string, unknown>): void {
    const { requestId, lastEventId, session } = params;
    if (this.resumable || this.lost || typeof lastEventId !== "string" || (typeof requestId !== "string" && typeof requestId !== "number")) return;
    this.resumable = true;
    const stream = { requestId: JSON.stringify(requestId), lastEventId, ...(typeof session === "string" ? { session } : {}) };
    void retryWhileUnavailable(
      () => this.deps.store.transitionTask(this.task.id, { kind: "bind-stream", stream, leaseToken: this.token, now: this.deps.clock() }),
      () => !this.lost && !this.ending,
    ).catch((err: unknown) => this.deps.logger.warn({ err, taskId: this.task.id }, "could not store where the call's response stream can be resumed"));
  }

  private inputBridge(): InputBridge {
    if (!this.input) {
      const { task, deps } = this;
      // Bounded by what is left of the task's TTL when the first question arrives.
      const ttlLeft = task.createdAt + this.ttlMs - deps.clock();
      const bound = (ms: number | undefined) => Math.max(1, Math.min(ms ?? ttlLeft, ttlLeft));
      const { inputTimeoutMs, mrtrTimeoutMs } = deps.options;
      const timeouts = {
        taskMs: bound(inputTimeoutMs),
        taskMsConfigured: inputTimeoutMs !== undefined && inputTimeoutMs <= ttlLeft,
        parkedMs: bound(mrtrTimeoutMs),
      };
      this.input = new InputBridge(task.id, this.token, this, deps, timeouts, (reason) => this.inputTimedOut(reason));
    }
    return this.input;
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(fn, ms);
    timer.unref();
    (this.timers ??= []).push(timer);
  }
}

function ownedTask({ id, principal, taskProtocol, upstream, tool, createdAt, ttlMs, pollIntervalMs, attempt, parked, requestParams }: TaskRecord): OwnedTask {
  return requestParams === undefined
    ? { id, principal, taskProtocol, upstream, tool, createdAt, ttlMs, pollIntervalMs, attempt, parked }
    : { id, principal, taskProtocol, upstream, tool, createdAt, ttlMs, pollIntervalMs, attempt, parked, requestParams };
}

/** What the failed record of a task the store lost says, on either task protocol. */
const RECORD_LOST =
  "this task's record was lost by the task store while its call ran (a failover that lost writes, a flush or an eviction); the call was cancelled";
/** The statusMessage of a record written again with the outcome its owner still had. */
const RECORD_RESTORED = "this task's record was lost by the task store while its call ran, and written again with its outcome by the replica that ran it";

/**
 * A write tried again after the store missed its deadline may find its own first try applied: the
 * store checks the lease before the status, so "wrong status" under this call's lease, in the very
 * status this call writes, is that first try (at a wave's end in scenario r, thousands of
 * outcome writes at once missed the deadline and were applied; their tasks ended uncounted and
 * unaudited). Only the owner ends a leased task completed or failed; a cancel by the client also
 * ends it cancelled, so a cancelled one is left to that cancel's count.
 */
function endedByEarlierTry(result: TransitionResult, end: Ending): TaskRecord | undefined {
  if (result.ok || result.reason !== "wrong_status" || end.to === "cancelled") return undefined;
  return result.task.status === end.to ? result.task : undefined;
}

/** A task's statusMessage while its call waits for a free slot on its upstream. */
function queueStatus(ahead: unknown): string {
  return typeof ahead === "number" ? `queued: ${ahead} ahead` : "running";
}

/**
 * limits.maxResultBytes: a result too large to keep fails the task with a clear error instead of
 * filling the store (the upstream's work is lost either way; this says so plainly). So does one
 * JSON cannot write (JSON.stringify gives up some 4,000 levels deep): it could never be stored.
 */
function storable(end: Ending, maxBytes: number | undefined): Ending {
  if (!end.outcome) return end;
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(end.outcome));
  } catch (err) {
    return failedWith(`the outcome cannot be written as JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (maxBytes === undefined || bytes <= maxBytes) return end;
  return failedWith(`the result is ${bytes} bytes, over the limit of ${maxBytes} (limits.maxResultBytes)`);
}

function endingChange(end: Ending, leaseToken: string, now: number): TaskChange & TaskEnding {
  const change: TaskChange & TaskEnding = { kind: ENDING_KIND[end.to], leaseToken, now };
  if (end.outcome) change.outcome = end.outcome;
  if (end.statusMessage !== undefined) change.statusMessage = end.statusMessage;
  return change;
}

function isTaskExists(err: unknown): boolean {
  return err instanceof Error && /exists/.test(err.message);
}

function failedWith(message: string): Ending {
  return { to: "failed", outcome: { error: { code: RPC.INTERNAL_ERROR, message } }, statusMessage: message };
}
