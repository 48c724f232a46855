import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { traced } from "../../observability/tracing.js";
import type { Span } from "@opentelemetry/api";
import {
  failure,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import { UpstreamError, type UpstreamConnector, type UpstreamEvent } from "../../upstream/connector.js";
import { LeftQueueError, type Ticket } from "./bulkhead.js";
import { inFlight, type InFlight } from "./in-flight.js";
import { ListChangedHub } from "./list-changed.js";
import { Questions } from "./questions.js";
import { queueNotices } from "./queued.js";
import { CALL_METHODS, CANCELLED_BEFORE_START, type CallOptions, type RelayOptions } from "./relay-options.js";
import { SessionStreams } from "./session-streams.js";

export { CANCELLED_BEFORE_START, type CallOptions, type PooledCalls, type RelayOptions } from "./relay-options.js";
import { CANCELLED_CODE, forwardedAuthorization, type CallClient, type UpstreamCaller } from "../../tasks/caller.js";
import { RPC } from "../../jsonrpc/codes.js";

/** Who is on the other end of a relayed request. */
export type FrontClient = CallClient;

/** Cancelled by the client: the upstream will not answer (2025-11-25 cancellation), so we do. */
const CANCELLED: JsonRpcErrorObject = { code: CANCELLED_CODE, message: "Request cancelled by the client" };

/**
 * The transparent proxy over one shared upstream session: many front clients, one upstream.
 * Request ids and progress tokens are remapped so clients never cross; messages the upstream sends
 * during a call go back to that call's own stream; the rest fans out to front sessions' streams.
 */
export class Relay implements UpstreamCaller {
  readonly streams: SessionStreams;
  readonly questions: Questions;
  /** The upstream's list-changed notifications, for the modern wire's listen streams too. */
  readonly listChanged: ListChangedHub;
  private readonly byFront = new Map<string, InFlight>();
  private readonly byUpstreamId = new Map<JsonRpcId, InFlight>();
  private readonly byProgressToken = new Map<string, InFlight>();
  private nextToken = 0;
  private lastLogLevel?: Record<string, unknown>;

  constructor(
    readonly connector: UpstreamConnector,
    private readonly logger: Logger,
    private readonly idPrefix: string,
    private readonly metrics: Metrics,
    private readonly options: RelayOptions = {},
  ) {
    this.listChanged = options.listChanged ?? new ListChangedHub();
    this.streams = options.streams ?? new SessionStreams();
    const { byFront, byUpstreamId } = this;
    const calls = {
      byUpstreamId: (id: JsonRpcId) => byUpstreamId.get(id),
      only: () => (byFront.size === 1 ? byFront.values().next().value : undefined),
      get size() {
        return byFront.size;
      },
    };
    this.questions = new Questions(connector, logger, idPrefix, calls, options.questions ?? { transport: "http" });
    connector.onEvent((event) => this.onUpstreamEvent(event));
  }

  /**
   * Relay one request and resolve with the upstream's answer under the client's id. Never rejects.
   * Measured and traced here, the one place every upstream request passes: the span is active while
   * the request is sent, so an HTTP upstream receives its `traceparent`.
   */
  call(client: FrontClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    const pooled = this.options.calls;
    if (pooled && CALL_METHODS.has(request.method)) return pooled.call(client, request, sink, options);
    const attributes = { "mcp.method": request.method, "taskgate.upstream": this.connector.name };
    return traced(`upstream ${request.method}`, attributes, (span) => this.relayCall(client, request, sink, options, span));
  }

  /**
   * Not an async function: a detached call holds what this returns for as long as the upstream
   * runs, and a suspended async frame (its generator, registers and promises) costs several times
   * one reaction with one context (issue 16, 10,000 calls held at once).
   */
  private relayCall(client: FrontClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions, span: Span): Promise<JsonRpcResponse> {
    if (this.byFront.has(frontKey(client.sessionId, request.id))) return Promise.resolve(failure(request.id, { code: RPC.INVALID_REQUEST, message: `request id ${String(request.id)} is already in flight` }));
    const local = this.answerLocally(client, request);
    if (local) return Promise.resolve(local);
    const started = performance.now();
    const call = inFlight(client, request.id, sink);
    // The key is made again at the end rather than kept: a string of several parts held per call.
    this.byFront.set(frontKey(client.sessionId, request.id), call);
    const slot = this.enter(request, sink, options);
    const sent = slot?.queued ? this.afterQueue(slot, call, request, options) : this.send(call, request, options);
    return sent.then(
      (response) => this.ended(call, slot, request, options, span, started, response),
      (err: unknown) => {
        const failed = failure(request.id, err instanceof LeftQueueError ? CANCELLED_BEFORE_START : call.abandoned ? CANCELLED : upstreamFailure(this.connector.name, err));
        return this.ended(call, slot, request, options, span, started, failed);
      },
    );
  }

  /** A place in the bulkhead, for the calls that run a handler upstream (its queue tells a task where it stands). */
  private enter(request: JsonRpcRequest, sink: MessageSink, options: CallOptions): Ticket | undefined {
    const bulkhead = CALL_METHODS.has(request.method) ? this.options.bulkhead : undefined;
    if (!bulkhead) return undefined;
    const notices = options.trackProgress ? queueNotices(sink) : undefined;
    const slot = bulkhead.enter(notices?.onAhead);
    if (slot.queued && notices) void slot.ready.then(() => notices.started(), () => undefined);
    return slot;
  }

  /** Sent once the call's turn comes; a call cancelled while it waited never reaches the upstream. */
  private async afterQueue(slot: Ticket, call: InFlight, request: JsonRpcRequest, options: CallOptions): Promise<JsonRpcResponse> {
    call.queue = slot;
    await slot.ready;
    call.queue = undefined;
    if (call.abandoned) return failure(request.id, CANCELLED_BEFORE_START);
    return this.send(call, request, options);
  }

  private send(call: InFlight, request: JsonRpcRequest, options: CallOptions): Promise<JsonRpcResponse> {
    try {
      return this.connector.request({
        ...onBehalfOf(call.client),
        method: request.method,
        params: this.withUpstreamProgressToken(request.params, call, options.trackProgress ?? false),
        stopWaiting: (stop) => {
          call.stop = stop;
          if (call.abandoned) stop();
        },
        onId: (upstreamId) => {
          call.upstreamId = upstreamId;
          this.byUpstreamId.set(upstreamId, call);
        },
      });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** The call's answer under the client's id, measured; its slot and its entries go. */
  private ended(call: InFlight, slot: Ticket | undefined, request: JsonRpcRequest, options: CallOptions, span: Span, started: number, response: JsonRpcResponse): JsonRpcResponse {
    slot?.leave();
    this.forget(frontKey(call.client.sessionId, call.frontId), call);
    const ok = !("error" in response);
    if (ok) this.afterSuccess(call.client, request, response);
    else span.setStatus({ code: 2, message: response.error.message });
    const seconds = (performance.now() - started) / 1000;
    const upstream = this.connector.name;
    this.metrics.upstreamCall(upstream, request.method, seconds, ok);
    // Task calls ask for progress (trackProgress); everything else is passthrough with the client waiting.
    if (!options.trackProgress) this.metrics.passthrough(upstream, request.method, seconds);
    // An answer the relay made itself (cancelled, failed) carries the client's id already.
    return response.id === request.id ? response : { ...response, id: request.id };
  }

  /**
   * Cancel one relayed request: `notifications/cancelled` upstream (once), then, unless `abandon` is
   * false, stop waiting and answer it as cancelled. A detached call waits a grace period between
   * the two, so a result that wins the race is kept.
   */
  async cancel(client: FrontClient, frontId: JsonRpcId, reason?: string, { abandon = true } = {}): Promise<void> {
    await this.options.calls?.cancel(client, frontId, reason, { abandon });
    const call = this.byFront.get(frontKey(client.sessionId, frontId));
    if (!call) return;
    // Still queued: it leaves the queue and the upstream never sees it.
    if (call.queue) {
      call.abandoned = true;
      call.queue.withdraw();
      return;
    }
    if (call.upstreamId !== undefined && !call.cancelSent) {
      call.cancelSent = true;
      const params: Record<string, unknown> = { requestId: call.upstreamId };
      if (reason !== undefined) params.reason = reason;
      await this.connector.notify({ method: "notifications/cancelled", params }, onBehalfOf(call.client)).catch(() => undefined);
      await this.questions.dismiss(call);
    }
    if (abandon) {
      call.abandoned = true;
      call.stop?.();
    }
  }

  /** The client's answer to a server→client request relayed to it. False when nothing waits for it. */
  async answer(client: FrontClient, response: JsonRpcResponse): Promise<boolean> {
    if (response.id === null) return false;
    if (await this.options.calls?.answer(client, response)) return true;
    return this.questions.answer(client, response);
  }

  /** A client notification that is not about one of its requests (e.g. roots/list_changed). */
  async notify(notification: JsonRpcNotification): Promise<void> {
    await this.connector.notify({ method: notification.method, params: notification.params });
  }

  /** The session ended: stop its calls upstream and release what only it held. */
  async endSession(client: FrontClient): Promise<void> {
    await this.options.calls?.endSession(client);
    const calls = [...this.byFront.values()].filter((c) => c.client.sessionId === client.sessionId);
    await Promise.all(calls.map((c) => this.cancel(client, c.frontId, "session ended")));
    for (const uri of this.streams.drop(client.sessionId)) void this.bestEffort("resources/unsubscribe", { uri });
  }

  get inFlight(): number {
    return this.byFront.size;
  }

  /** Requests whose answer depends on what other front sessions hold, answered here. */
  private answerLocally(client: FrontClient, request: JsonRpcRequest): JsonRpcResponse | undefined {
    if (request.method !== "resources/unsubscribe") return undefined;
    const uri = request.params?.uri;
    if (typeof uri !== "string" || !this.streams.heldByOthers(client.sessionId, uri)) return undefined;
    this.streams.unsubscribe(client.sessionId, uri);
    return { jsonrpc: "2.0", id: request.id, result: {} };
  }

  private afterSuccess(client: FrontClient, request: JsonRpcRequest, response: JsonRpcResponse): void {
    if ("error" in response) return;
    const uri = request.params?.uri;
    if (request.method === "resources/subscribe" && typeof uri === "string") this.streams.subscribe(client.sessionId, uri);
    if (request.method === "resources/unsubscribe" && typeof uri === "string") this.streams.unsubscribe(client.sessionId, uri);
    if (request.method === "logging/setLevel") this.lastLogLevel = request.params;
  }

  private withUpstreamProgressToken(params: Record<string, unknown> | undefined, call: InFlight, always: boolean) {
    const meta = params?._meta as Record<string, unknown> | undefined;
    const token = meta?.progressToken;
    const hasToken = typeof token === "string" || typeof token === "number";
    if (!hasToken && !always) return params;
    const upstreamToken = `${this.idPrefix}-p${++this.nextToken}`;
    if (hasToken) call.frontProgressToken = token;
    call.upstreamProgressToken = upstreamToken;
    this.byProgressToken.set(upstreamToken, call);
    return { ...params, _meta: { ...meta, progressToken: upstreamToken } };
  }

  private forget(key: string, call: InFlight): void {
    this.byFront.delete(key);
    if (call.upstreamId !== undefined) this.byUpstreamId.delete(call.upstreamId);
    // Every task call has a progress token: a scan here cost O(calls held) per finished call.
    if (call.upstreamProgressToken !== undefined) this.byProgressToken.delete(call.upstreamProgressToken);
  }

  private onUpstreamEvent(event: UpstreamEvent): void {
    if (event.kind === "notification") this.routeNotification(event.message, event.relatedTo);
    else if (event.kind === "request") void this.questions.route(event.message, event.relatedTo);
    // A pool process serves calls only: per-session state (subscriptions, log level) stays on the home process.
    else if (event.ready && !this.options.poolMember) void this.restoreUpstreamState();
    else this.questions.clear();
  }

  private routeNotification(message: JsonRpcNotification, relatedTo?: JsonRpcId): void {
    const params = message.params ?? {};
    if (message.method === "notifications/progress") {
      const call = this.byProgressToken.get(String(params.progressToken));
      if (call) call.sink.send({ ...message, params: { ...params, progressToken: call.frontProgressToken } });
      return;
    }
    if (message.method === "notifications/cancelled") {
      const target = this.questions.withdraw(params.requestId as JsonRpcId);
      if (target) target.sink.send({ ...message, params: { ...params, requestId: target.frontId } });
      return;
    }
    // Session-wide news, whichever call's stream it came on: also for the modern wire's listen streams.
    this.listChanged.emit(message);
    if (message.method === "notifications/resources/updated" && typeof params.uri === "string") {
      this.streams.toSubscribers(params.uri, message);
      return;
    }
    const call = relatedTo !== undefined ? this.byUpstreamId.get(relatedTo) : undefined;
    if (!call?.sink.send(message)) this.streams.broadcast(message);
  }

  /** After an upstream restart: subscriptions and the logging level the fronts asked for. */
  private async restoreUpstreamState(): Promise<void> {
    for (const uri of this.streams.subscribedUris()) await this.bestEffort("resources/subscribe", { uri });
    if (this.lastLogLevel) await this.bestEffort("logging/setLevel", this.lastLogLevel);
  }

  private async bestEffort(method: string, params: Record<string, unknown>): Promise<void> {
    await this.connector.request({ method, params }).catch((err: unknown) => {
      this.logger.debug({ err, method }, "upstream state restore failed");
    });
  }
}

/**
 * What is sent for one client's call (the call, its cancel, the client's answers to its questions)
 * carries that client's Authorization where forwarded; taskgate's own messages (initialize,
 * restoring subscriptions and the logging level, list refreshes) and session-wide notifications
 * never do.
 */
function onBehalfOf(client: FrontClient): { authorization?: string } {
  return forwardedAuthorization(client.authorization);
}

function frontKey(sessionId: string, id: JsonRpcId): string {
  return `${sessionId}\u0000${typeof id}:${String(id)}`;
}

function upstreamFailure(name: string, err: unknown): JsonRpcErrorObject {
  const detail = err instanceof UpstreamError ? err.message : err instanceof Error ? err.message : String(err);
  return { code: RPC.INTERNAL_ERROR, message: `upstream '${name}' failed: ${detail}` };
}
