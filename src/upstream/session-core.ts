import type { JsonRpcErrorObject, JsonRpcId, JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from "../jsonrpc/message.js";
import { failure, success } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import { UpstreamError, type InitializeResultLike, type OnBehalf, type StreamResume, type UpstreamEvent, type UpstreamRequest } from "./connector.js";
import { Inbound } from "./inbound.js";
import { ModernCalls } from "./modern/rounds.js";
import { generationMemory, negotiate, type GenerationSetting, type UpstreamGeneration } from "./negotiate.js";
import { PendingRequests } from "./pending.js";

/** What a transport does for the core: write one message upstream. */
export interface SessionLink {
  /**
   * Resolves once the message is handed over; a response comes back through `SessionCore.receive`.
   * `onBehalf`: the front client it is sent for, absent for taskgate's own messages.
   */
  send(message: JsonRpcMessage, onBehalf?: OnBehalf): Promise<void>;
  /**
   * `send` for a request, told of a failure instead of returning a promise: every call makes
   * one, and stdio writes need no promise to say they went out.
   */
  sendRequest?(message: JsonRpcMessage, onBehalf: OnBehalf | undefined, failed: (err: unknown) => void): void;
  /** Nobody waits for this request any more (answered, aborted, timed out, failed). */
  release?(id: JsonRpcId): void;
  /**
   * Stop the upstream working on request `id` on the 2026-07-28 wire where the transport has its
   * own way: on Streamable HTTP closing the request's stream is the cancellation
   * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation). Without it, notifications/cancelled is sent.
   */
  abort?(id: JsonRpcId): void;
  /** The transport can resume a response stream another replica opened (UpstreamRequest.resume). */
  readonly resumes?: boolean;
  /** The upstream session messages go on when none is named (HTTP): what the upstream asks is keyed by it. */
  session?(): string | undefined;
}

export interface SessionCoreOptions {
  name: string;
  logger: Logger;
  requestTimeoutMs?: number | undefined;
  /** An upstream that never answers `initialize` must not hold `start()` forever. */
  initializeTimeoutMs: number;
  /** upstreams[].generation: which protocol generation to speak (default auto). */
  generation?: GenerationSetting | undefined;
  /** auto, first contact: a 2026-07-28 request before `initialize` (Streamable HTTP's way to tell the eras apart). */
  probeModern?: boolean | undefined;
  /** The upstream's configuration: what it spoke last is remembered under it (see generationMemory). */
  config?: object;
  /** What `initialize` declares: the capabilities of the callers this session serves (default taskgate's own). */
  clientCapabilities?: Record<string, unknown> | undefined;
}

/**
 * The upstream session, whatever carries it: id numbering, the pending map, the handshake, the
 * ready state and the dispatch of what the upstream sends. Transports only move bytes.
 */
export class SessionCore {
  private readonly pending: PendingRequests;
  private readonly inbound: Inbound;
  private result: InitializeResultLike | undefined;
  private ready = false;
  private failure: UpstreamError | undefined;
  private handshaking: Promise<void> | undefined;
  /** What the upstream speaks now (undefined until first negotiated). */
  private spoken: UpstreamGeneration | undefined;
  private readonly modern: ModernCalls;

  constructor(
    private readonly options: SessionCoreOptions,
    private readonly link: SessionLink,
  ) {
    this.pending = new PendingRequests(options.name, (id) => link.release?.(id));
    this.inbound = new Inbound(options.logger, this.pending, link, () => this.ready);
    this.modern = new ModernCalls(options.name, {
      send: (method, params, opts) => this.call(method, params, opts),
      ask: (request, relatedTo) =>
        this.ready && this.inbound.listener !== undefined && (this.inbound.emit({ kind: "request", message: request, relatedTo }), true),
      cancel: (id, reason) => this.cancelUpstream(id, reason),
    });
  }

  /** The generation negotiated with the upstream, once it is ready. */
  generation(): UpstreamGeneration | undefined {
    return this.ready ? this.spoken : undefined;
  }

  initializeResult(): InitializeResultLike | undefined {
    return this.result;
  }

  isReady(): boolean {
    return this.ready;
  }

  lastError(): string | undefined {
    return this.ready ? undefined : (this.failure?.message ?? `upstream '${this.options.name}' is not started`);
  }

  onEvent(listener: (event: UpstreamEvent) => void): void {
    this.inbound.listener = listener;
  }

  /**
   * Not an async function: when ready (nearly always) the caller gets the pending request's own
   * promise, with no layer of promises and reactions held around it for as long as the upstream
   * runs (a detached call holds it, 10,000 at once).
   */
  request(req: UpstreamRequest): Promise<JsonRpcResponse> {
    const handshake = this.handshakeInProgress();
    if (handshake) return handshake.then(() => this.requestWhenReady(req));
    try {
      return this.requestWhenReady(req);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private requestWhenReady(req: UpstreamRequest): Promise<JsonRpcResponse> {
    this.assertReady();
    // Only a legacy session over HTTP has response streams to resume; anything else would send the request again.
    if (req.resume !== undefined && (this.spoken === "modern" || this.link.resumes !== true))
      throw new UpstreamError(`upstream '${this.options.name}' has no response stream to resume (not a 2025-11-25 Streamable HTTP session)`, "protocol");
    if (this.spoken !== "modern") return this.call(req.method, req.params, req);
    // 2026-07-28 has no ping (https://modelcontextprotocol.io/specification/2026-07-28/changelog): the stateless upstream is as alive as its next answer.
    if (req.method === "ping") return Promise.resolve(success(this.pending.allocate(), {}));
    return this.modern.request(req);
  }

  async notify(notification: Omit<JsonRpcNotification, "jsonrpc">, onBehalf?: OnBehalf): Promise<void> {
    const handshake = this.handshakeInProgress();
    if (handshake) await handshake;
    this.assertReady();
    if (this.spoken === "modern") return this.notifyModern(notification);
    await this.link.send({ jsonrpc: "2.0", ...notification }, onBehalf);
  }

  respond(id: JsonRpcId, outcome: { result: Record<string, unknown> } | { error: JsonRpcErrorObject }, onBehalf?: OnBehalf): Promise<void> {
    // A question of an MRTR round: answered into the call's next round, never onto the wire.
    if (this.modern.answer(id, outcome)) return Promise.resolve();
    return this.inbound.respond(id, "result" in outcome ? success(id, outcome.result) : failure(id, outcome.error), onBehalf);
  }

  /** For transports: one message the upstream sent; `relatedTo` when the transport knows it; `session` when the request it came on named one. */
  receive(message: JsonRpcMessage, relatedTo?: JsonRpcId, session?: string): void {
    this.inbound.receive(message, relatedTo, session);
  }

  /** For transports: request `relatedTo`'s response stream can be resumed from `position`. */
  streamPosition(relatedTo: JsonRpcId, position: StreamResume): void {
    this.inbound.emit({ kind: "stream", relatedTo, position });
  }

  isWaiting(id: JsonRpcId): boolean {
    return this.pending.has(id);
  }

  failRequest(id: JsonRpcId, error: UpstreamError): void {
    this.pending.fail(id, error);
  }

  /** `initialize`, then `notifications/initialized`, then ready. Requests made meanwhile wait for it. */
  async handshake(): Promise<void> {
    const run = this.runHandshake();
    this.handshaking = run;
    try {
      await run;
    } catch (err) {
      this.failure = toUpstreamError(err, this.options.name);
      throw this.failure;
    } finally {
      if (this.handshaking === run) this.handshaking = undefined;
    }
  }

  /**
   * The session is gone. `failPending` when nothing in flight can still be answered (a dead
   * process); HTTP leaves each open response stream to end on its own.
   */
  markDown(error: UpstreamError, { failPending }: { failPending: boolean }): void {
    this.failure = error;
    this.inbound.forgetAsked();
    if (failPending) this.pending.failAll(error);
    if (!this.ready) return;
    this.ready = false;
    this.inbound.emit({ kind: "state", ready: false, reason: error.message });
  }

  private async runHandshake(): Promise<void> {
    this.inbound.forgetAsked();
    const timeoutMs = this.options.initializeTimeoutMs;
    const { name, generation = "auto" } = this.options;
    const key = this.options.config ?? this;
    const negotiated = await negotiate((method, params) => this.call(method, params, { timeoutMs }), generation, generationMemory.of(key), name, {
      probeModern: this.options.probeModern,
      capabilities: this.options.clientCapabilities,
    });
    this.result = negotiated.result;
    this.spoken = negotiated.generation;
    generationMemory.keep(key, negotiated.generation);
    if (negotiated.generation === "legacy") await this.link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const { protocolVersion, serverInfo } = negotiated.result;
    this.options.logger.info({ generation: negotiated.generation, protocolVersion, server: `${serverInfo.name} ${serverInfo.version}` }, "upstream ready");
    this.ready = true;
    this.failure = undefined;
    this.inbound.emit({ kind: "state", ready: true });
  }

  /**
   * Waits only while a handshake runs, never for a restart: while the upstream is down, requests
   * fail at once. Synchronous when ready, so nothing can slip between the check and the send.
   */
  private handshakeInProgress(): Promise<unknown> | undefined {
    return !this.ready && this.handshaking ? this.handshaking.catch(() => undefined) : undefined;
  }

  private assertReady(): void {
    if (this.ready) return;
    const why = this.failure;
    throw new UpstreamError(`upstream '${this.options.name}' is not ready: ${why?.message ?? "not started"}`, why?.reason ?? "closed");
  }

  private call(
    method: string,
    params: Record<string, unknown> | undefined,
    opts: Pick<UpstreamRequest, "signal" | "onId" | "stopWaiting" | "authorization" | "session" | "resume"> & { timeoutMs?: number },
  ): Promise<JsonRpcResponse> {
    const id = this.pending.allocate();
    opts.onId?.(id);
    const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs;
    // Only an HTTP upstream's configuration has requestTimeoutMs.
    const timeoutSetting = opts.timeoutMs === undefined && timeoutMs !== undefined ? "upstreams[].http.requestTimeoutMs" : undefined;
    const onTimeout = timeoutMs === undefined ? undefined : this.onTimeout(id, timeoutMs);
    const response = this.pending.wait(id, { method, signal: opts.signal, timeoutMs, timeoutSetting, onTimeout, stopWaiting: opts.stopWaiting });
    // Stopped before it was sent (aborted, or stopped at once): the upstream never sees it.
    if (!this.pending.has(id)) return response;
    const message = params === undefined ? { jsonrpc: "2.0" as const, id, method } : { jsonrpc: "2.0" as const, id, method, params };
    const { authorization, session, resume } = opts;
    const onBehalf = authorization === undefined && session === undefined && resume === undefined ? undefined : { authorization, session, resume };
    const failed = (err: unknown) => this.pending.fail(id, toUpstreamError(err, this.options.name));
    if (this.link.sendRequest) this.link.sendRequest(message, onBehalf, failed);
    else this.link.send(message, onBehalf).catch(failed);
    return response;
  }

  private onTimeout(id: JsonRpcId, timeoutMs: number): () => void {
    return () => this.cancelAfterTimeout(id, timeoutMs);
  }

  /** Only the connector knows it gave up, so it tells the upstream itself (spec: cancellation). */
  private cancelAfterTimeout(id: JsonRpcId, timeoutMs: number | undefined): void {
    if (this.ready) this.cancelUpstream(id, `taskgate stopped waiting after ${timeoutMs} ms`);
  }

  private cancelUpstream(id: JsonRpcId, reason: string | undefined): void {
    if (this.spoken === "modern" && this.link.abort) return this.link.abort(id);
    const params = reason === undefined ? { requestId: id } : { requestId: id, reason };
    this.link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params }).catch(() => undefined);
  }

  /**
   * The stateless wire takes no notifications from a client but the cancellation of a request
   * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation); a call's cancel names its first id.
   */
  private async notifyModern(notification: Omit<JsonRpcNotification, "jsonrpc">): Promise<void> {
    const requestId = notification.params?.requestId;
    const reason = typeof notification.params?.reason === "string" ? notification.params.reason : undefined;
    if (notification.method === "notifications/cancelled" && (typeof requestId === "string" || typeof requestId === "number"))
      this.modern.cancel(requestId, reason);
    else this.options.logger.debug({ method: notification.method }, "not sent: the 2026-07-28 upstream takes no such notification");
  }
}

export function toUpstreamError(err: unknown, upstreamName: string): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new UpstreamError(`upstream '${upstreamName}': ${detail}`, "closed");
}
