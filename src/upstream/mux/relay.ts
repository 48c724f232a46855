import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { traced, tracingEnabled } from "../../observability/tracing.js";
import { failure, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { ResumeFrom, StreamResume, UpstreamConnector, UpstreamEvent, UpstreamRequest } from "../connector.js";
import { LeftQueueError, type Ticket } from "./bulkhead.js";
import { ListChangedHub } from "./list-changed.js";
import { Questions } from "./questions.js";
import { entryOf, mayStart, queueNotices, type QueueNotices } from "./queued.js";
import {
  CALL_METHODS,
  LIST_METHODS,
  CANCELLED,
  CANCELLED_BEFORE_START,
  frontKey,
  upstreamFailure,
  type CallOptions,
  type RelayOptions,
} from "./relay-options.js";
import { SessionStreams } from "./session-streams.js";

export { CANCELLED_BEFORE_START, type CallOptions, type PooledCalls, type RelayOptions } from "./relay-options.js";
// What is sent for one client's call (the call, its cancel, the client's answers to its questions)
// carries that client's Authorization where forwarded, and the session of an upstream task another
// replica started; taskgate's own messages (initialize, restoring subscriptions and the
// logging level, list refreshes) and session-wide notifications never do.
import { onBehalfOf, STREAM_NOTICE, type CallClient, type CancelOptions, type UpstreamCaller } from "../caller.js";
import { RPC } from "../../jsonrpc/codes.js";
import { withFields } from "../../util/with-fields.js";
import { InFlightMap } from "../../util/in-flight-map.js";

/** Who is on the other end of a relayed request. */
export type FrontClient = CallClient;

interface InFlight {
  client: FrontClient;
  frontId: JsonRpcId;
  sink: MessageSink;
  /** What relayCall needs once the upstream answers (its byFront key, the request, its bulkhead slot). */
  key: string;
  request: JsonRpcRequest;
  slot?: Ticket | undefined;
  /** Set by cancel(): the call is answered as cancelled. */
  abandoned?: boolean;
  /** Stops waiting for the upstream's answer (a closure rather than an AbortSignal: see UpstreamRequest). */
  stop?: () => void;
  upstreamId?: JsonRpcId;
  frontProgressToken?: string | number;
  /** The token the upstream was given, so forgetting the call is one delete, not a scan. */
  upstreamProgressToken?: string;
  cancelSent?: boolean;
  /** Its place in the bulkhead's queue, until it starts: leaving it means it never starts. */
  leaveQueue?: (() => boolean) | undefined;
  /** A tasks/result: the upstream task whose questions come on it. */
  relatedTask?: string;
  /** Made by the task engine (trackProgress): it may hear of its stream's position (STREAM_NOTICE). */
  tracked?: boolean;
  /** Its response stream can be resumed by another replica: a hand-over leaves it running upstream. */
  resumable?: boolean;
}

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
  private readonly byFront = new InFlightMap<string, InFlight>();
  private readonly byUpstreamId = new InFlightMap<JsonRpcId, InFlight>();
  private readonly byProgressToken = new InFlightMap<string, InFlight>();
  /** Open tasks/result requests by upstream task id: over stdio, a question's related-task `_meta` is its only link. */
  private readonly byRelatedTask = new Map<string, InFlight>();
  private nextToken = 0;
  /** The front session of the last call made here: on a pooled connection, whose log lines arrive after its call. */
  private lastCaller: string | undefined;
  private lastLogLevel?: Record<string, unknown>;
  /** Where the upstream's notifications/tasks/status go (the native-task bridge); never to a front session. */
  onTaskStatus: ((params: Record<string, unknown>) => void) | undefined;

  constructor(
    readonly connector: UpstreamConnector,
    private readonly logger: Logger,
    private readonly idPrefix: string,
    private readonly metrics: Metrics,
    private readonly options: RelayOptions = {},
  ) {
    this.listChanged = options.listChanged ?? new ListChangedHub();
    this.streams = options.streams ?? new SessionStreams();
    const { byFront, byUpstreamId, byRelatedTask } = this;
    const calls = {
      byUpstreamId: (id: JsonRpcId) => byUpstreamId.get(id),
      byRelatedTask: (taskId: string) => byRelatedTask.get(taskId),
      only: () => this.soleCall(),
      all: () => byFront.values(),
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
    // A task-augmented call stays on the home process, where its tasks/get and tasks/result go too.
    if (pooled && CALL_METHODS.has(request.method) && request.params?.task === undefined && pooled.takesCalls())
      return pooled.call(client, request, sink, options);
    // A caller's list, from a session that declared what it did; taskgate's own reads stay home.
    if (pooled && LIST_METHODS.has(request.method) && client.own !== true && pooled.takesCalls())
      return pooled.list(client, request, sink, options).then((listed) => listed ?? this.callHere(client, request, sink, options));
    return this.callHere(client, request, sink, options);
  }

  /** `call` on this relay's own connection. */
  private callHere(client: FrontClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions): Promise<JsonRpcResponse> {
    const started = performance.now();
    // Without a tracing SDK no span, nor its attributes and closure, is made per call.
    if (!tracingEnabled()) return this.relayCall(client, request, sink, options).then((response) => this.measured(request, response, started, options));
    const attributes = { "mcp.method": request.method, "taskgate.upstream": this.connector.name };
    // A promise reaction rather than an async callback: a detached call is held for as long as
    // the upstream runs, and a suspended async frame costs several times a reaction's memory.
    return traced(`upstream ${request.method}`, attributes, (span) =>
      this.relayCall(client, request, sink, options).then((response) => {
        if ("error" in response) span.setStatus({ code: 2, message: response.error.message });
        return this.measured(request, response, started, options);
      }),
    );
  }

  private measured(request: JsonRpcRequest, response: JsonRpcResponse, started: number, options: CallOptions): JsonRpcResponse {
    const upstream = this.connector.name;
    const seconds = (performance.now() - started) / 1000;
    this.metrics.upstreamCall(upstream, request.method, seconds, !("error" in response));
    // Task calls ask for progress (trackProgress); everything else is passthrough with the client waiting.
    if (!options.trackProgress) this.metrics.passthrough(upstream, request.method, seconds);
    return response;
  }

  /**
   * The response stream of a call another replica made, resumed from `position` in its upstream
   * session: the upstream's answer to that call is this request's answer. Not queued: the call
   * runs upstream already.
   */
  resumeStream(client: FrontClient, request: JsonRpcRequest, position: StreamResume, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    const { session, requestId, lastEventId } = position;
    const own = session === undefined ? client : { ...client, upstreamSession: session };
    return this.relayCall(own, request, sink, options, { requestId, lastEventId });
  }

  /**
   * Promise reactions rather than an async function, each made in a method that captures only the
   * call: a detached call is held while the upstream runs, and what its reactions keep (a
   * suspended frame's registers, or one context of every local) is held as long.
   */
  private relayCall(client: FrontClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions, resume?: ResumeFrom): Promise<JsonRpcResponse> {
    const key = frontKey(client.sessionId, request.id);
    if (this.byFront.has(key))
      return Promise.resolve(failure(request.id, { code: RPC.INVALID_REQUEST, message: `request id ${String(request.id)} is already in flight` }));
    const local = this.answerLocally(client, request);
    if (local) return Promise.resolve(local);
    const call: InFlight = { client, frontId: request.id, sink, key, request };
    if (options.trackProgress) call.tracked = true;
    this.lastCaller = client.sessionId;
    this.byFront.set(key, call);
    const relatedTask = request.method === "tasks/result" ? request.params?.taskId : undefined;
    if (typeof relatedTask === "string") {
      call.relatedTask = relatedTask;
      this.byRelatedTask.set(relatedTask, call);
    }
    const bulkhead = resume === undefined && CALL_METHODS.has(request.method) ? this.options.bulkhead : undefined;
    const notices = bulkhead && options.trackProgress ? queueNotices(sink) : undefined;
    try {
      const slot = bulkhead?.enter(entryOf(client, options, notices));
      call.slot = slot;
      if (!slot || slot.started) return this.start(call, options, notices, resume);
      // Its turn in the queue; a call abandoned meanwhile never starts.
      call.leaveQueue = () => slot.withdraw();
      return slot.ready.then(
        () => {
          call.leaveQueue = undefined;
          return call.abandoned ? this.done(call, failure(request.id, CANCELLED_BEFORE_START)) : this.start(call, options, notices, resume);
        },
        (err: unknown) => this.unanswered(call, err),
      );
    } catch (err) {
      return Promise.resolve(this.unanswered(call, err));
    }
  }

  /** Whether a call that had to wait may still start (a task cancelled while queued may not), then sent. */
  private start(call: InFlight, options: CallOptions, notices: QueueNotices | undefined, resume: ResumeFrom | undefined): Promise<JsonRpcResponse> {
    const allowed = call.slot ? mayStart(options) : undefined;
    if (!allowed) return this.send(call, options, notices, resume);
    return allowed.then(
      (yes) => (yes ? this.send(call, options, notices, resume) : this.done(call, failure(call.frontId, CANCELLED_BEFORE_START))),
      (err: unknown) => this.unanswered(call, err),
    );
  }

  private send(call: InFlight, options: CallOptions, notices: QueueNotices | undefined, resume: ResumeFrom | undefined): Promise<JsonRpcResponse> {
    try {
      notices?.started();
      return this.connector.request(this.upstreamRequest(call, options, resume)).then(
        (response) => this.answered(call, response),
        (err: unknown) => this.unanswered(call, err),
      );
    } catch (err) {
      return Promise.resolve(this.unanswered(call, err));
    }
  }

  private upstreamRequest(call: InFlight, options: CallOptions, resume: ResumeFrom | undefined): UpstreamRequest {
    const { client, request } = call;
    // Its own fields first, the spreads after: see withFields (util/with-fields.ts).
    return {
      clientCapabilities: client.capabilities,
      method: request.method,
      params: this.withUpstreamProgressToken(request.params, call, options.trackProgress === true && options.askProgress !== false),
      stopWaiting: (stop) => {
        call.stop = stop;
        if (call.abandoned) stop();
      },
      onId: (upstreamId) => {
        call.upstreamId = upstreamId;
        this.byUpstreamId.set(upstreamId, call);
      },
      ...onBehalfOf(client),
      ...(resume !== undefined ? { resume } : {}),
    };
  }

  private answered(call: InFlight, response: JsonRpcResponse): JsonRpcResponse {
    try {
      this.afterSuccess(call.client, call.request, response);
      this.questions.ended(call);
    } catch (err) {
      return this.unanswered(call, err);
    }
    // The response was decoded for this call alone: it takes the caller's id in place, not in a copy.
    response.id = call.frontId;
    return this.done(call, response);
  }

  private unanswered(call: InFlight, err: unknown): JsonRpcResponse {
    if (err instanceof LeftQueueError) return this.done(call, failure(call.frontId, CANCELLED_BEFORE_START));
    // Sent and not answered (cancelled, timed out, the connection failed): its handler may still run and ask.
    if (call.upstreamId !== undefined) this.questions.callLeftRunning();
    return this.done(call, failure(call.frontId, call.abandoned ? CANCELLED : upstreamFailure(this.connector.name, err)));
  }

  private done(call: InFlight, response: JsonRpcResponse): JsonRpcResponse {
    call.slot?.leave();
    this.forget(call.key, call);
    return response;
  }

  /**
   * Cancel one relayed request: `notifications/cancelled` upstream (once), then, unless `abandon` is
   * false, stop waiting and answer it as cancelled. A detached call waits a grace period between
   * the two, so a result that wins the race is kept.
   */
  async cancel(client: FrontClient, frontId: JsonRpcId, reason?: string, options: CancelOptions = {}): Promise<void> {
    await this.options.calls?.cancel(client, frontId, reason, options);
    await this.cancelHere(client, frontId, reason, options);
  }

  /** Whether the call's response stream can be resumed by another replica (its upstream gave event ids). */
  isResumable(client: FrontClient, frontId: JsonRpcId): boolean {
    return this.byFront.get(frontKey(client.sessionId, frontId))?.resumable === true;
  }

  /** `cancel` of a call this relay runs itself, never handed over to the pool. */
  async cancelHere(client: FrontClient, frontId: JsonRpcId, reason?: string, { abandon = true, keepUpstreamTask = false }: CancelOptions = {}): Promise<void> {
    const call = this.byFront.get(frontKey(client.sessionId, frontId));
    if (!call) return;
    if (keepUpstreamTask && call.resumable) {
      // Another replica resumes its response stream: the upstream goes on with it.
      call.abandoned = true;
      call.stop?.();
      return;
    }
    // Still queued: it leaves the queue and the upstream never sees it.
    if (call.leaveQueue) {
      call.abandoned = true;
      call.leaveQueue();
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
    return withFields(params, { _meta: withFields(meta, { progressToken: upstreamToken }) });
  }

  private forget(key: string, call: InFlight): void {
    this.byFront.delete(key);
    if (call.upstreamId !== undefined) this.byUpstreamId.delete(call.upstreamId);
    // Every task call has a progress token: a scan here cost O(calls held) per finished call.
    if (call.upstreamProgressToken !== undefined) this.byProgressToken.delete(call.upstreamProgressToken);
    if (call.relatedTask !== undefined && this.byRelatedTask.get(call.relatedTask) === call) this.byRelatedTask.delete(call.relatedTask);
  }

  private onUpstreamEvent(event: UpstreamEvent): void {
    if (event.kind === "notification") this.routeNotification(event.message, event.relatedTo);
    else if (event.kind === "request") void this.questions.route(event.message, event.relatedTo);
    else if (event.kind === "stream") this.positioned(event.relatedTo, event.position);
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
    // About a task of taskgate's own session upstream, never a front client's business.
    if (message.method === "notifications/tasks/status") return this.onTaskStatus?.(params);
    // Session-wide news, whichever call's stream it came on: also for the modern wire's listen streams.
    this.listChanged.emit(message);
    if (message.method === "notifications/resources/updated" && typeof params.uri === "string") {
      this.streams.toSubscribers(params.uri, message);
      return;
    }
    // A log line on a pooled session's GET stream was written by the one call running there, or,
    // once it ended (the GET stream may deliver after the call's answer), by the last one: it goes
    // to that caller's session alone, never to every session.
    const lone = relatedTo === undefined && message.method === "notifications/message" && this.options.questions?.oneCallPerConnection;
    const call = relatedTo !== undefined ? this.byUpstreamId.get(relatedTo) : lone ? this.soleCall() : undefined;
    if (call?.sink.send(message)) return;
    if (lone && this.lastCaller !== undefined) return void this.streams.sendTo(this.lastCaller, message);
    this.streams.broadcast(message);
  }

  /** Only a call the task engine made hears where its stream can be resumed: a client's own never does. */
  private positioned(relatedTo: JsonRpcId, position: StreamResume): void {
    const call = this.byUpstreamId.get(relatedTo);
    if (!call?.tracked) return;
    call.resumable = true;
    call.sink.send({ jsonrpc: "2.0", method: STREAM_NOTICE, params: { ...position } });
  }

  /** The only call in flight on this connection, if exactly one is. */
  private soleCall(): InFlight | undefined {
    return this.byFront.size === 1 ? this.byFront.values().next().value : undefined;
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
