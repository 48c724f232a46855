import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { Logger } from "../../observability/logger.js";
import { onBehalfOf, type CallClient } from "../caller.js";
import type { UpstreamConnector } from "../connector.js";
import { missingClientCapability } from "./capabilities.js";
import { Elimination } from "./elimination.js";
import { ServerRequests } from "./server-requests.js";
import { answerUnowned, cancelledAnswer, type Outcome, type QuestionPolicy } from "./unowned.js";
import { RPC } from "../../jsonrpc/codes.js";

/** What the question router needs to know of a call the relay holds. */
export interface AskingCall {
  client: CallClient;
  sink: MessageSink;
  cancelSent?: boolean;
  abandoned?: boolean;
}

/** How the relay's calls are found: by the upstream id a transport names, and how many run. */
export interface CallIndex {
  byUpstreamId(id: JsonRpcId): AskingCall | undefined;
  /** The tasks/result waiting on this upstream task. */
  byRelatedTask(taskId: string): AskingCall | undefined;
  /** The only call in flight, if exactly one is. */
  only(): AskingCall | undefined;
  /** Every call in flight. */
  all(): Iterable<AskingCall>;
  readonly size: number;
}

/**
 * Server→client requests (elicitation, sampling, roots) on their way to the client whose call
 * asked, and the answers on their way back. A question is tied to a call by the call's own
 * stream (HTTP) or, on stdio, by being the only call on its process; one that belongs to no call
 * is answered by the policy (upstreams[].roots), one of a cancelled call as cancelled, and one
 * that is ambiguous is refused: a question never reaches a caller other than the one who asked.
 */
export class Questions {
  private readonly open: ServerRequests;
  /** Set once no question here can be tied to a call (a call was cancelled, or left running): all is declined. */
  private retired = false;
  /** Set on a process that runs several calls at once (the quiet lane): questions are held, then tied by elimination. */
  private elimination: Elimination<AskingCall> | undefined;
  /** Questions heard (pings aside): a run that heard none asked nothing. */
  asked = 0;
  /** Calls that ended on taskgate's side while their handler may still run (cancelled, timed out, failed). */
  leftRunning = 0;

  constructor(
    private readonly connector: UpstreamConnector,
    private readonly logger: Logger,
    idPrefix: string,
    private readonly calls: CallIndex,
    private readonly policy: QuestionPolicy,
  ) {
    this.open = new ServerRequests(`${idPrefix}-s`);
  }

  async route(request: JsonRpcRequest, relatedTo?: JsonRpcId): Promise<void> {
    if (request.method === "ping") return this.reply(request.id, { result: {} });
    this.asked++;
    if (this.retired) return this.reply(request.id, cancelledAnswer(request.method));
    if (this.elimination && this.calls.size > 1 && relatedTo === undefined && relatedTaskOf(request) === undefined) {
      const call = await this.elimination.hold(request.method, this.calls.all());
      return call ? this.toCall(request, call) : this.reply(request.id, cancelledAnswer(request.method));
    }
    const call = this.askingCall(request, relatedTo);
    if (!call) return this.unowned(request, relatedTo);
    return this.toCall(request, call);
  }

  /** The question goes to the client whose call asked it, unless that call was cancelled. */
  private async toCall(request: JsonRpcRequest, call: AskingCall): Promise<void> {
    if (this.retired) return this.reply(request.id, cancelledAnswer(request.method));
    // A cancelled call's question is never shown: answered so the server's handler can unwind.
    if (call.cancelSent || call.abandoned) return this.reply(request.id, cancelledAnswer(request.method));
    const missing = missingClientCapability(request.method, request.params, call.client.capabilities);
    if (missing) return this.reply(request.id, { error: { code: RPC.METHOD_NOT_FOUND, message: `the client did not declare the ${missing} capability` } });
    if (this.open.relay(request, call.client, call.sink, call) === undefined)
      return this.reply(request.id, {
        error: { code: RPC.INTERNAL_ERROR, message: "the client has no open stream for this call (it accepts no text/event-stream)" },
      });
  }

  /**
   * The call a question belongs to: the one whose stream it came on (HTTP); the tasks/result of
   * the upstream task its related-task `_meta` names (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks,
   * Related Task Metadata; a sure link on a shared stdio process too); else, on stdio or on a
   * pooled HTTP session (its GET stream), the only call in flight.
   */
  private askingCall(request: JsonRpcRequest, relatedTo: JsonRpcId | undefined): AskingCall | undefined {
    if (relatedTo !== undefined) return this.calls.byUpstreamId(relatedTo);
    const related = relatedTaskOf(request);
    // A question about a task nobody follows here is nobody's: never guessed onto another call.
    if (related !== undefined) return this.calls.byRelatedTask(related);
    return this.policy.transport === "stdio" || this.policy.oneCallPerConnection ? this.calls.only() : undefined;
  }

  /** The client's answer to a question relayed to it. False when nothing waits for it. */
  async answer(client: CallClient, response: JsonRpcResponse): Promise<boolean> {
    if (response.id === null) return false;
    const pending = this.open.take(response.id, client.sessionId);
    if (!pending) return false;
    const outcome = "error" in response ? { error: response.error } : { result: response.result };
    // On behalf of the client whose call asked (the answer may come with a newer token of its session).
    await this.connector.respond(pending.upstreamId, outcome, onBehalfOf(pending.client));
    return true;
  }

  /** Questions the cancelled call asked that are still open, answered as cancelled. */
  async dismiss(call: AskingCall): Promise<void> {
    for (const open of this.open.takeAll(call)) await this.reply(open.upstreamId, cancelledAnswer(open.method));
  }

  /** From now on several calls run here at once: a question is held until it can be tied to one (elimination.ts). */
  holdAmbiguous(): void {
    this.elimination ??= new Elimination(this.logger);
  }

  /** The call ended with its handler's answer; held questions strike it off. */
  ended(call: AskingCall): void {
    this.elimination?.ended(call);
  }

  /**
   * A call ended on taskgate's side while its handler may still run (cancelled, timed out, the
   * connection failed). Where questions are tied by elimination, none can be any more: its
   * handler may ask at any time, as a call that seems to be elsewhere; so every later question
   * is declined, and what is held is given up. Questions already shown stay open.
   */
  callLeftRunning(): void {
    this.leftRunning++;
    if (!this.elimination) return;
    this.retired = true;
    this.elimination.giveUp();
  }

  /** No question was heard and nothing is declined: the process may take more calls. */
  get quiet(): boolean {
    return this.asked === 0 && !this.retired;
  }

  /** From now on every question is declined, and what is open is answered as cancelled. */
  async retire(): Promise<void> {
    this.retired = true;
    this.elimination?.giveUp();
    for (const open of this.open.takeEvery()) await this.reply(open.upstreamId, cancelledAnswer(open.method));
  }

  /** The upstream withdrew one of its requests (notifications/cancelled): who must hear of it. */
  withdraw(upstreamId: JsonRpcId): { frontId: string; sink: MessageSink } | undefined {
    return this.open.withdraw(upstreamId);
  }

  /** The upstream session restarted: its request ids mean nothing any more. */
  clear(): void {
    this.open.clear();
  }

  private unowned(request: JsonRpcRequest, relatedTo: JsonRpcId | undefined): Promise<void> {
    if (relatedTo !== undefined || (this.policy.transport !== "stdio" && !this.policy.oneCallPerConnection) || this.calls.size === 0)
      return this.reply(request.id, answerUnowned(request, this.policy, this.logger));
    this.logger.warn(
      { method: request.method, callsInFlight: this.calls.size },
      "a server-to-client request could not be tied to one call (several calls were in flight on the shared stdio process); refused. Leave `isolation` at its default (pool) on this upstream to run each call on a process of its own",
    );
    return this.reply(request.id, { error: { code: RPC.INTERNAL_ERROR, message: "taskgate cannot tell which client call this request belongs to" } });
  }

  private async reply(id: JsonRpcId, outcome: Outcome): Promise<void> {
    await this.connector.respond(id, outcome).catch(() => undefined);
  }
}

/** The upstream task a request names in its related-task `_meta`, if any. */
function relatedTaskOf(request: JsonRpcRequest): string | undefined {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const related = meta?.["io.modelcontextprotocol/related-task"] as { taskId?: unknown } | undefined;
  return typeof related?.taskId === "string" ? related.taskId : undefined;
}
