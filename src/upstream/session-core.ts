import type { JsonRpcErrorObject, JsonRpcId, JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from "../jsonrpc/message.js";
import { failure, success } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import { UpstreamError, type InitializeResultLike, type OnBehalf, type UpstreamEvent, type UpstreamRequest } from "./connector.js";
import { initializeParams, readInitializeResult } from "./handshake.js";
import { Inbound } from "./inbound.js";
import { PendingRequests } from "./pending.js";

/** What a transport does for the core: write one message upstream. */
export interface SessionLink {
  /**
   * Resolves once the message is handed over; a response comes back through `SessionCore.receive`.
   * `onBehalf`: the front client it is sent for, absent for taskgate's own messages.
   */
  send(message: JsonRpcMessage, onBehalf?: OnBehalf): Promise<void>;
  /** Nobody waits for this request any more (answered, aborted, timed out, failed). */
  release?(id: JsonRpcId): void;
}

export interface SessionCoreOptions {
  name: string;
  logger: Logger;
  requestTimeoutMs?: number | undefined;
  /** An upstream that never answers `initialize` must not hold `start()` forever. */
  initializeTimeoutMs: number;
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

  constructor(
    private readonly options: SessionCoreOptions,
    private readonly link: SessionLink,
  ) {
    this.pending = new PendingRequests(options.name, (id) => link.release?.(id));
    this.inbound = new Inbound(options.logger, this.pending, link, () => this.ready);
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
   * runs (issue 16: a detached call holds it, 10,000 at once).
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
    return this.call(req.method, req.params, req);
  }

  async notify(notification: Omit<JsonRpcNotification, "jsonrpc">, onBehalf?: OnBehalf): Promise<void> {
    const handshake = this.handshakeInProgress();
    if (handshake) await handshake;
    this.assertReady();
    await this.link.send({ jsonrpc: "2.0", ...notification }, onBehalf);
  }

  respond(id: JsonRpcId, outcome: { result: Record<string, unknown> } | { error: JsonRpcErrorObject }, onBehalf?: OnBehalf): Promise<void> {
    return this.inbound.respond(id, "result" in outcome ? success(id, outcome.result) : failure(id, outcome.error), onBehalf);
  }

  /** For transports: one message the upstream sent; `relatedTo` when the transport knows it. */
  receive(message: JsonRpcMessage, relatedTo?: JsonRpcId): void {
    this.inbound.receive(message, relatedTo);
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
    const response = await this.call("initialize", initializeParams(), { timeoutMs });
    this.result = readInitializeResult(response, this.options.name);
    await this.link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
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
    opts: Pick<UpstreamRequest, "signal" | "onId" | "stopWaiting" | "authorization"> & { timeoutMs?: number },
  ): Promise<JsonRpcResponse> {
    const id = this.pending.allocate();
    opts.onId?.(id);
    const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs;
    const onTimeout = timeoutMs === undefined ? undefined : this.onTimeout(id, timeoutMs);
    const response = this.pending.wait(id, { method, signal: opts.signal, timeoutMs, onTimeout, stopWaiting: opts.stopWaiting });
    // Stopped before it was sent (aborted, or stopped at once): the upstream never sees it.
    if (!this.pending.has(id)) return response;
    const message = params === undefined ? { jsonrpc: "2.0" as const, id, method } : { jsonrpc: "2.0" as const, id, method, params };
    const onBehalf = opts.authorization === undefined ? undefined : { authorization: opts.authorization };
    this.link.send(message, onBehalf).catch((err: unknown) => this.pending.fail(id, toUpstreamError(err, this.options.name)));
    return response;
  }

  private onTimeout(id: JsonRpcId, timeoutMs: number): () => void {
    return () => this.cancelAfterTimeout(id, timeoutMs);
  }

  /** Only the connector knows it gave up, so it tells the upstream itself (spec: cancellation). */
  private cancelAfterTimeout(id: JsonRpcId, timeoutMs: number | undefined): void {
    const params = { requestId: id, reason: `taskgate stopped waiting after ${timeoutMs} ms` };
    if (!this.ready) return;
    this.link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params }).catch(() => undefined);
  }
}

export function toUpstreamError(err: unknown, upstreamName: string): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new UpstreamError(`upstream '${upstreamName}': ${detail}`, "closed");
}
