import type { HttpUpstreamConfig } from "../../config/schema.js";
import { decodeMessage } from "../../jsonrpc/decode.js";
import { isRequest, isResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import { injectTraceContext } from "../../observability/tracing.js";
import { UpstreamError, type OnBehalf, type ResumeFrom, type StreamResume } from "../connector.js";
import { UpstreamClient, type UpstreamResponse } from "./client.js";
import { exchangeBroken, isConnectFailure, unreachable, withoutCredentials, withoutSecrets } from "./errors.js";
import { urlSecrets } from "../../util/redact-url.js";
import { modernHeaders } from "../modern/envelope.js";
import { failAnswered } from "../refused-answer.js";
import { resumeResponse } from "./request-stream.js";
import { acceptResponse } from "./response.js";
import { RequestAbort } from "./request-abort.js";
import { InFlightMap } from "../../util/in-flight-map.js";

/** Where the link hands what it learns: the session core and the connector. */
export interface HttpLinkHooks {
  /** `session`: the upstream session the request it came on named (another replica's, or this one's named by a task link). */
  receive(message: JsonRpcMessage, relatedTo?: JsonRpcId, session?: string): void;
  isWaiting(id: JsonRpcId): boolean;
  failRequest(id: JsonRpcId, error: UpstreamError): void;
  protocolVersion(): string | undefined;
  /** The upstream forgot session `sessionId` (404): resolves once a new session is initialized. */
  sessionLost(sessionId: string): Promise<void>;
  unreachable(error: UpstreamError): void;
  /** Request `relatedTo`'s response stream gave its first event id: it can be resumed from `position`. */
  streamPosition(relatedTo: JsonRpcId, position: StreamResume): void;
}

const RELEASED = new Error("nobody waits for this response stream any more");
/** The reason of a stream closed to cancel its request (2026-07-28): the request is not failed by it. */
const CANCELLED = new Error("the request was cancelled upstream by closing its stream");

/** Messages of the handshake itself: a 404 on them is an answer, not a lost session to renew. */
const HANDSHAKE = new Set(["initialize", "notifications/initialized"]);

/**
 * Streamable HTTP, client side: every message is one POST. What arrives on the response stream of
 * a request is attributed to that request (`relatedTo`); that is why this is not the SDK client.
 */
export class HttpLink {
  sessionId: string | undefined;
  private closed = false;
  private readonly streams = new InFlightMap<JsonRpcId, RequestAbort>();
  /** Whom requests were sent for (a client's Authorization, another session), while their stream may need resuming. */
  private readonly forwarded = new InFlightMap<JsonRpcId, OnBehalf>();
  readonly client: UpstreamClient;
  /** Where requests go: the configured URL without its user and password, which go as a header. */
  readonly url: string;
  /** The configured headers, validated once, by their lower-case names. */
  private readonly staticHeaders: Readonly<Record<string, string>>;
  /** What taskgate sends that no text it writes may hold: the URL's credentials and query values, the header values. */
  private readonly secrets: readonly string[];

  constructor(
    readonly name: string,
    readonly config: HttpUpstreamConfig,
    readonly logger: Logger,
    readonly hooks: HttpLinkHooks,
  ) {
    this.client = new UpstreamClient(config.connectTimeoutMs);
    const { url, headers } = withUserinfoAsHeader(config.url, config.headers);
    this.url = url;
    this.staticHeaders = Object.fromEntries(headers);
    this.secrets = [...urlSecrets(config.url), ...headers.values()];
  }

  /** An error of this link's own making, ready to show: what it quotes of the URL and headers cut out. */
  unreachable(err: unknown): UpstreamError {
    return unreachable(this.name, this.config.url, err, this.secrets, this.config.connectTimeoutMs);
  }

  /** A text from or about the upstream (its body, a stream's error) as taskgate may write it. */
  redact(text: string): string {
    return withoutSecrets(text, this.secrets);
  }

  async send(message: JsonRpcMessage, onBehalf?: OnBehalf): Promise<void> {
    const [sent, whose] = this.resumedCancel(message) ?? [message, onBehalf];
    await this.exchange(sent, whose).catch((err: unknown) => {
      const shown = this.shown(err, whose);
      if (shown !== undefined) throw shown;
    });
  }

  /** `send` for a request, its failure told to `failed`: the session core calls it for every request, without `send`'s promise. */
  sendRequest(message: JsonRpcMessage, onBehalf: OnBehalf | undefined, failed: (err: unknown) => void): void {
    this.exchange(message, onBehalf).catch((err: unknown) => {
      const shown = this.shown(err, onBehalf);
      if (shown !== undefined) failed(shown);
    });
  }

  /**
   * Why a message did not go, as taskgate may show it: without the credentials it carried (gathered
   * only for an error to clean). Undefined for a request cancelled by closing its stream: like a
   * legacy server after notifications/cancelled, it is left unanswered, and its caller decides
   * when to stop waiting.
   */
  private shown(err: unknown, onBehalf: OnBehalf | undefined): unknown {
    if (err === CANCELLED) return undefined;
    const authorization = onBehalf?.authorization;
    return withoutCredentials(err, authorization === undefined ? this.secrets : [authorization, ...this.secrets]);
  }

  /** Not async: every call comes this way, and each layer of `async` would cost it a promise and a turn. */
  private exchange(message: JsonRpcMessage, onBehalf: OnBehalf | undefined): Promise<void> {
    if (onBehalf?.resume !== undefined && isRequest(message)) return this.resumeStream(message, onBehalf, onBehalf.resume);
    return this.post(message, onBehalf).then(({ response, sessionId }) => this.answered(message, onBehalf, response, sessionId));
  }

  /** What the upstream answered to `message`'s POST, sent in session `sessionId`. Not async: nearly every answer is taken at once. */
  private answered(
    message: JsonRpcMessage,
    onBehalf: OnBehalf | undefined,
    response: UpstreamResponse,
    sessionId: string | undefined,
  ): Promise<void> | undefined {
    return response.status === 404 ? this.notFound(message, onBehalf, response, sessionId) : acceptResponse(this, response, message);
  }

  /** A 404: the session is lost, and renewed before a request is sent again; on the handshake, an answer like another. */
  private async notFound(message: JsonRpcMessage, onBehalf: OnBehalf | undefined, response: UpstreamResponse, sessionId: string | undefined): Promise<void> {
    if (onBehalf?.session !== undefined && onBehalf.session !== sessionId) {
      // Another replica's session: gone with its tasks; nothing to renew here.
      await response.discard();
      throw new UpstreamError(`upstream '${this.name}' no longer knows session ${onBehalf.session} (HTTP 404)`, "protocol");
    }
    if (sessionId !== undefined && !("method" in message && HANDSHAKE.has(message.method))) {
      await response.discard();
      await this.hooks.sessionLost(sessionId);
      // A notification or an answer belonged to the lost session; only a request is worth repeating.
      if (!isRequest(message)) return;
      ({ response } = await this.post(message, onBehalf));
      if (response.status === 404) throw new UpstreamError(`upstream '${this.name}' lost its new session at once (HTTP 404)`, "protocol");
    }
    return acceptResponse(this, response, message);
  }

  /**
   * The static headers, then `extra`; `authorization` (a front client's own, for a message sent on
   * its behalf) replaces a static Authorization. Only requests for one client carry it.
   */
  headers(extra: Record<string, string> = {}, onBehalf?: OnBehalf): Record<string, string> {
    // A plain object, not a web Headers, which cost several µs a call to build and read back;
    // undici validates what it sends. Every name here is lower-case, as the configured ones now are.
    const headers: Record<string, string> = Object.assign({}, this.staticHeaders, extra);
    if (onBehalf?.authorization !== undefined) headers.authorization = onBehalf.authorization;
    const version = this.hooks.protocolVersion();
    if (version !== undefined) headers["mcp-protocol-version"] = version;
    const session = onBehalf?.session ?? this.sessionId;
    if (session !== undefined) headers["mcp-session-id"] = session;
    // W3C trace context of the active span (the upstream call's), a no-op unless tracing is on.
    injectTraceContext(headers);
    return headers;
  }

  /** One SSE `data` or JSON body from the upstream; `relatedTo` when it came on a request's stream. */
  deliver(text: string, relatedTo?: JsonRpcId): void {
    const decoded = decodeMessage(text, { maxDepth: this.config.maxJsonDepth });
    if (decoded.ok) {
      const onBehalf = relatedTo === undefined ? undefined : this.forwarded.get(relatedTo);
      const resumed = onBehalf?.resume;
      // A resumed stream answers the id its request was sent with; here it answers the one waiting for it.
      if (resumed !== undefined && relatedTo !== undefined && isResponse(decoded.message) && decoded.message.id === resumed.requestId)
        decoded.message.id = relatedTo;
      return this.hooks.receive(decoded.message, relatedTo, onBehalf?.session);
    }
    if (failAnswered(this.name, decoded, "upstreams[].http.maxJsonDepth", this.hooks)) return;
    const data = this.redact(text.slice(0, 400)).slice(0, 200);
    this.logger.warn({ kind: decoded.kind, detail: decoded.detail && this.redact(decoded.detail), data }, "skipped an upstream message that is not JSON-RPC");
  }

  /** The signal that ends request `id`'s stream once nobody waits for its response. */
  signalFor(id: JsonRpcId): AbortSignal | undefined {
    return this.streams.get(id)?.signal;
  }

  /** Whom request `id` was sent for (Authorization, session), so resuming its stream sends the same. */
  onBehalfFor(id: JsonRpcId): OnBehalf | undefined {
    return this.forwarded.get(id);
  }

  /** Request `id`'s stream gave its first event id: where another replica could resume it (a resumed one: where it was resumed from). */
  positioned(id: JsonRpcId, eventId: string): void {
    const onBehalf = this.forwarded.get(id);
    const session = onBehalf?.session ?? this.sessionId;
    const from: ResumeFrom = onBehalf?.resume ?? { requestId: id, lastEventId: eventId };
    this.hooks.streamPosition(id, session === undefined ? { ...from } : { ...from, session });
  }

  /** Close request `id`'s stream now: on the 2026-07-28 wire that cancels the request upstream. */
  abort(id: JsonRpcId): void {
    this.streams.get(id)?.abort(CANCELLED);
  }

  release(id: JsonRpcId): void {
    const controller = this.streams.get(id);
    this.streams.delete(id);
    this.forwarded.delete(id);
    // A response usually arrives with the end of its stream in the same read: a turn later that
    // stream is finished and the abort costs nothing (it would otherwise close a reusable
    // connection). One shared reason: an abort without one builds a DOMException and its stack.
    if (controller) setImmediate(() => controller.abort(RELEASED));
  }

  /** Ends every open stream; later sends fail as closed. */
  close(): void {
    this.closed = true;
    for (const controller of this.streams.values()) controller.abort();
    this.streams.clear();
    this.forwarded.clear();
    this.client.close();
  }

  /** Best effort: the upstream can free the session now rather than on its own timeout. */
  async deleteSession(sessionId: string, timeoutMs: number): Promise<void> {
    const headers = this.headers({ "mcp-session-id": sessionId });
    const response = await fetch(this.url, { method: "DELETE", headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
  }

  /** No POST: the response stream of a request sent before (by another replica), resumed after `from.lastEventId`. */
  private async resumeStream(request: JsonRpcRequest, onBehalf: OnBehalf, from: ResumeFrom): Promise<void> {
    if (this.closed) throw new UpstreamError(`upstream '${this.name}' is closed`, "closed");
    this.streams.set(request.id, new RequestAbort());
    this.forwarded.set(request.id, onBehalf);
    await resumeResponse(this, request, from.lastEventId);
  }

  /**
   * notifications/cancelled for a resumed request names the id its request was sent with, in
   * that request's session: the upstream knows no other.
   */
  private resumedCancel(message: JsonRpcMessage): [JsonRpcMessage, OnBehalf] | undefined {
    if (!("method" in message) || message.method !== "notifications/cancelled" || this.forwarded.size === 0) return undefined;
    const requestId = message.params?.requestId;
    const onBehalf = typeof requestId === "string" || typeof requestId === "number" ? this.forwarded.get(requestId) : undefined;
    if (onBehalf?.resume === undefined) return undefined;
    const { resume, ...whose } = onBehalf;
    return [{ ...message, params: { ...message.params, requestId: resume.requestId } }, whose];
  }

  /** The POST of one message; `sessionId`: the session it went in. */
  private post(message: JsonRpcMessage, onBehalf: OnBehalf | undefined): Promise<{ response: UpstreamResponse; sessionId: string | undefined }> {
    if (this.closed) return Promise.reject(new UpstreamError(`upstream '${this.name}' is closed`, "closed"));
    const sessionId = this.sessionId;
    const controller = new RequestAbort();
    if (isRequest(message)) this.streams.set(message.id, controller);
    if (isRequest(message) && (onBehalf?.authorization !== undefined || onBehalf?.session !== undefined)) this.forwarded.set(message.id, onBehalf);
    let posted: Promise<UpstreamResponse>;
    try {
      const accept = { accept: "application/json, text/event-stream", "content-type": "application/json" };
      const headers = this.headers(accept, onBehalf);
      if (isInitialize(message)) delete headers["mcp-protocol-version"];
      // A request in the 2026-07-28 envelope carries its version and names in headers too (SEP-2243).
      const modern = modernHeaders(message);
      if (modern !== undefined) Object.assign(headers, modern);
      posted = this.client.post(this.url, { headers, body: JSON.stringify(message), signal: controller });
    } catch (err) {
      // As from the async function this was: the caller's one way to hear of a failure is the promise.
      return Promise.reject(err);
    }
    return posted.then(
      (response) => ({ response: this.took(message, response), sessionId }),
      (err: unknown) => {
        throw this.postFailure(err, controller, message);
      },
    );
  }

  /** The answer to an `initialize` names the session it made. */
  private took(message: JsonRpcMessage, response: UpstreamResponse): UpstreamResponse {
    if (isInitialize(message) && response.ok) this.sessionId = response.header("mcp-session-id") ?? this.sessionId;
    return response;
  }

  /** A POST that got no answer, as its caller is told. */
  private postFailure(err: unknown, controller: RequestAbort, message: JsonRpcMessage): unknown {
    if (controller.reason === CANCELLED) return CANCELLED;
    if (controller.aborted) return new UpstreamError(`upstream '${this.name}': request abandoned`, "closed");
    // Only a connection that could not be made says anything about the upstream; anything else is this call's.
    if (!isConnectFailure(err)) return exchangeBroken(this.name, "method" in message ? message.method : "a response", err);
    const error = this.unreachable(err);
    this.hooks.unreachable(error);
    return error;
  }
}

const isInitialize = (message: JsonRpcMessage): boolean => "method" in message && message.method === "initialize";

/**
 * A URL's `user:password@` goes as Basic credentials (RFC 7617), as curl sends it: fetch refuses
 * such a URL and undici's request drops them. A configured Authorization header wins.
 */
function withUserinfoAsHeader(configured: string, configuredHeaders: Record<string, string>): { url: string; headers: Headers } {
  const url = new URL(configured);
  const headers = new Headers(configuredHeaders);
  if (url.username === "" && url.password === "") return { url: configured, headers };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  if (!headers.has("authorization")) headers.set("authorization", `Basic ${Buffer.from(credentials).toString("base64")}`);
  url.username = "";
  url.password = "";
  return { url: url.href, headers };
}
