import type { LogContext } from "../observability/log-context.js";
import type { JsonRpcId, JsonRpcResponse } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import type { InputRequest, TaskRecord } from "../store/contract.js";
import type { OwnedCall } from "./owned-call.js";
import type { CallTarget, ParkTicket } from "./request-state.js";
import { waitingForOwner } from "./owner.js";
import { settle } from "./settle.js";
import { SwitchSink } from "./sinks.js";
import { isTerminal } from "./transitions.js";
import { isToolCall, type EngineDeps, type TaskCall } from "./types.js";
import { RPC } from "../jsonrpc/codes.js";
import { QueueWait } from "../upstream/caller.js";

/**
 * Where a call that is still synchronous stands when the client gets an answer:
 * - `inline`: it ended (its own result or error);
 * - `task`: it detached into a task (`CreateTaskResult`);
 * - `input`: the upstream asked something: an MRTR round (`input_required` + a signed
 *   requestState naming the parked call; https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr).
 */
export type SyncOutcome =
  | { inline: JsonRpcResponse }
  | { task: TaskRecord; asking?: boolean }
  | { input: { inputRequests: Record<string, InputRequest>; ticket: ParkTicket } };

/** How long the call may stay synchronous before it detaches; undefined: it never detaches. */
export interface SyncOptions {
  detachAfterMs?: number;
  /**
   * A question before the call detached detaches it at once instead of parking it in an MRTR
   * round: the question then waits in the task (a caller served through the gateway tools
   * answers it with the answer tool as tasks/update would).
   */
  detachOnInput?: boolean;
}

type Create = (call: TaskCall, parked: boolean, started: number) => Promise<{ owned: OwnedCall; task: TaskRecord }>;
type Route = (taskId: string, owner: string) => Promise<void>;
/** Undefined when the call holds nothing to give back (it was never admitted). */
type Release = (call: TaskCall) => Promise<void> | undefined;

/** What a call that did not end first takes into its task. */
interface Detaching {
  sink: SwitchSink;
  queueWait: QueueWait;
  running: Promise<JsonRpcResponse>;
  early: "input" | undefined;
  startedAt: number;
  started: number;
}

/**
 * Calls on a wire without server→client requests (2026-07-28). A question before the call
 * detached parks it: the upstream call stays open on this replica (the owner, under a lease, like
 * a task), its questions wait in the store, and the client's retry on any replica writes the
 * answers there and is routed to the owner, as tasks/update is. After the answers the call goes
 * on and may still detach: MRTR rounds are resolved before a CreateTaskResult (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
 */
export class SyncCalls {
  constructor(
    private readonly deps: EngineDeps,
    private readonly create: Create,
    private readonly route: Route,
    private readonly release: Release,
  ) {}

  /**
   * `target`: the request the rounds' requestState is bound to (a retry must name the same).
   * Whichever comes first decides: the answer, a question, the detach threshold. One promise
   * settled by the first of them, and no await until the call detaches: most calls end inline,
   * and a race of three promises and an async function cost them several microseconds
   * (docs/contributing/performance.md#the-synchronous-round).
   */
  start(call: TaskCall, target: CallTarget, front: MessageSink, options: SyncOptions): Promise<SyncOutcome> {
    const startedAt = this.deps.clock();
    const started = performance.now();
    let decide!: (early: JsonRpcResponse | "input" | undefined) => void;
    let fail!: (err: unknown) => void;
    const decided = new Promise<JsonRpcResponse | "input" | undefined>((resolve, reject) => {
      decide = resolve;
      fail = reject;
    });
    const sink = new SwitchSink(front, () => decide("input"));
    // Progress feeds a task's statusMessage, so the upstream is asked for it only where the call may
    // become a task: never a prompts/get or resources/read, nor a call that neither has a threshold
    // nor detaches on a question (a question parks it for an MRTR round; it goes on synchronously).
    // A plain call while the client waits on it (queueTimeoutMs bounds a wait in the queue); its TTL once it detaches.
    const queueWait = new QueueWait();
    let running: Promise<JsonRpcResponse>;
    try {
      running = call.caller.call(call.client, call.request, sink, {
        trackProgress: isToolCall(call),
        askProgress: options.detachAfterMs !== undefined || options.detachOnInput === true,
        ttlMs: call.ttlMs,
        principal: call.principal,
        queueWait,
      });
    } catch (err) {
      // Rejected, never thrown, as from the async function this was.
      return Promise.reject(err);
    }
    running.then(decide, fail);
    // Cleared once the race is decided: a pending timer would hold the call's answer until it fired.
    const timer = options.detachAfterMs === undefined ? undefined : setTimeout(decide, options.detachAfterMs, undefined).unref();
    return decided.then((early) => {
      clearTimeout(timer);
      if (early === undefined || early === "input") return this.detach(call, target, options, { sink, queueWait, running, early, startedAt, started });
      const released = this.release(call);
      return released ? released.then(() => ({ inline: early })) : { inline: early };
    });
  }

  /** The call did not end first: it becomes a task, or parks for an MRTR round (`early` "input"). */
  private async detach(
    call: TaskCall,
    target: CallTarget,
    { detachAfterMs, detachOnInput }: SyncOptions,
    { sink, queueWait, running, early, startedAt, started }: Detaching,
  ): Promise<SyncOutcome> {
    const parked = early === "input" && detachOnInput !== true;
    const { owned, task } = await this.create(call, parked, started);
    if (!parked) queueWait.becameTask(task.ttlMs, task.createdAt + task.ttlMs - this.deps.clock());
    // Before the notices it held: a call still queued marks its task so (OwnedCall.markQueued).
    owned.attachQueue(queueWait);
    sink.detachTo(owned);
    owned.run(running, call.maxDurationMs);
    // `asking`: detached by a question (detachOnInput), which the task shows once it is written.
    if (!parked) return early === "input" ? { task, asking: true } : { task };
    const deadline = detachAfterMs === undefined ? undefined : startedAt + detachAfterMs;
    return (await this.round(task.id, target, call.principal, call.request.id, deadline, call.log)) ?? gone(call.request.id);
  }

  /**
   * The client's retry with `inputResponses`: written durably (only outstanding keys count, so a
   * repeated retry changes nothing), routed to the owner, then the next round. Undefined when
   * the parked call is gone (expired).
   */
  async resume(
    ticket: ParkTicket,
    principal: string,
    requestId: JsonRpcId,
    responses: Record<string, unknown>,
    { detachAfterMs }: SyncOptions,
  ): Promise<SyncOutcome | undefined> {
    const { parkId, target } = ticket;
    const now = this.deps.clock();
    const written = await this.deps.store.addInputResponses(parkId, principal, responses, now);
    if (!written) return undefined;
    if (waitingForOwner(written)) await this.route(parkId, written.task.owner);
    return this.round(parkId, target, principal, requestId, detachAfterMs === undefined ? undefined : now + detachAfterMs);
  }

  /** Wait for the parked call's next state the client must hear of. */
  private round(
    parkId: string,
    target: CallTarget,
    principal: string,
    requestId: JsonRpcId,
    deadline: number | undefined,
    log?: LogContext,
  ): Promise<SyncOutcome | undefined> {
    const { store, clock } = this.deps;
    return settle<SyncOutcome | "gone">(
      store,
      parkId,
      principal,
      async (task, late) => {
        if (!task) return "gone";
        if (isTerminal(task.status)) return { inline: endedAs(task, requestId) };
        if (!task.parked) return { task };
        const open = unanswered(task);
        if (Object.keys(open).length > 0) return { input: { inputRequests: open, ticket: this.ticket(task, target) } };
        if (!late) return undefined;
        // Past detachAfterMs with nothing outstanding: detach now. Refused (a question just
        // arrived, or answers are not taken yet): the next read decides.
        const detached = await store.transitionTask(parkId, { kind: "detach", principal, now: clock() });
        if (!detached.ok) return undefined;
        this.deps.metrics.taskCreated(detached.task.upstream, detached.task.tool);
        this.deps.audit.record(
          "task.create",
          detached.task.principal,
          { taskId: parkId, tool: detached.task.tool, taskProtocol: detached.task.taskProtocol },
          log,
        );
        return { task: detached.task };
      },
      { deadline, clock },
    ).then((o) => (o === "gone" ? undefined : o));
  }

  private ticket(task: TaskRecord, target: CallTarget): ParkTicket {
    const ttlLeft = task.createdAt + task.ttlMs - this.deps.clock();
    const life = Math.min(this.deps.options.mrtrTimeoutMs, ttlLeft);
    return { parkId: task.id, replicaId: task.owner, target, expiresAt: this.deps.clock() + Math.max(1, life) };
  }
}

/** Questions still waiting for an answer (answered ones stay listed until the owner takes them). */
function unanswered(task: TaskRecord): Record<string, InputRequest> {
  return Object.fromEntries(Object.entries(task.inputRequests).filter(([key]) => !Object.hasOwn(task.inputResponses, key)));
}

/** A call that ended while parked answers exactly as it would have inline. */
function endedAs(task: TaskRecord, id: JsonRpcId): JsonRpcResponse {
  const outcome = task.outcome;
  if (outcome && "result" in outcome) return { jsonrpc: "2.0", id, result: outcome.result };
  if (outcome) return { jsonrpc: "2.0", id, error: outcome.error };
  return { jsonrpc: "2.0", id, error: { code: RPC.INTERNAL_ERROR, message: task.statusMessage ?? `the call ended ${task.status}` } };
}

function gone(id: JsonRpcId): SyncOutcome {
  return { inline: { jsonrpc: "2.0", id, error: { code: RPC.INTERNAL_ERROR, message: "the parked call expired" } } };
}
