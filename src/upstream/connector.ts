import type { UpstreamGeneration } from "./negotiate.js";
import type { JsonRpcErrorObject, JsonRpcId, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from "../jsonrpc/message.js";

/**
 * What the rest of taskgate sees of one upstream MCP server, whatever carries it (stdio, HTTP).
 *
 * The connector owns the upstream session: it makes `initialize` itself, caches the result,
 * re-initializes after a restart (stdio) or a 404 (HTTP), and numbers upstream request ids itself,
 * so callers never see or choose them. Many front clients share one connector.
 */
export interface UpstreamConnector {
  readonly name: string;
  /** Spawn / connect and initialize. Rejects with a clear message when the upstream cannot be reached. */
  start(): Promise<void>;
  /** The cached `InitializeResult` of the current upstream session; undefined until initialized. */
  initializeResult(): InitializeResultLike | undefined;
  /** Initialized and able to take requests right now. */
  isReady(): boolean;
  /** Why the upstream is not ready (for logs and /readyz), if it is not. */
  lastError(): string | undefined;
  /** The protocol generation negotiated with the upstream (legacy session or the 2026-07-28 wire), once ready. */
  generation(): UpstreamGeneration | undefined;

  /**
   * Send one request upstream. `method`/`params` are relayed untouched; the connector chooses the id.
   * Resolves with the upstream's response (id already rewritten to the caller's `id` is NOT done here:
   * the response carries the upstream id, callers use their own). Rejects only on transport failure
   * (upstream exited, unreachable, closed) with an `UpstreamError`.
   */
  request(req: UpstreamRequest): Promise<JsonRpcResponse>;
  /** Send a notification upstream (e.g. notifications/cancelled with an upstream request id). */
  notify(notification: Omit<JsonRpcNotification, "jsonrpc">, onBehalf?: OnBehalf): Promise<void>;
  /**
   * Answer a server→client request the upstream made (a `request` event). An answer to a request
   * that is no longer open (already answered, cancelled by the upstream, or from a session that
   * has since ended) is dropped without error, so retries are safe.
   */
  respond(upstreamRequestId: JsonRpcId, outcome: { result: Record<string, unknown> } | { error: JsonRpcErrorObject }, onBehalf?: OnBehalf): Promise<void>;

  /** Messages from the upstream that are not responses: see `UpstreamEvent`. One listener. */
  onEvent(listener: (event: UpstreamEvent) => void): void;
  /**
   * Close stdin → SIGTERM → SIGKILL (stdio), or DELETE the session (HTTP). Idempotent.
   * `keepSession` (HTTP): leave the session to the upstream's own timeout, because another
   * replica follows tasks of the upstream's that live in it.
   */
  close(options?: { keepSession?: boolean }): Promise<void>;
  /** The upstream session requests go on now (HTTP, `Mcp-Session-Id`); undefined over stdio. */
  session(): string | undefined;
}

/**
 * Whose message this is when it is made for one front client (not for the shared session).
 * `authorization` is that client's own header, handed in only where the upstream forwards it
 * (`http.forwardAuthorization`); the HTTP transport sends it over the static one, stdio has no
 * headers. Held in memory for the message's life only: never logged, stored or put in errors.
 */
export interface OnBehalf {
  authorization?: string | undefined;
  /**
   * An upstream session other than the connector's own (HTTP): where a task of the upstream's
   * lives that another replica started. Its loss is reported, never renewed.
   */
  session?: string | undefined;
  /**
   * Not a new request: the response stream of request `requestId`, which another replica sent
   * in `session`, resumed after event `lastEventId` (HTTP, 2025-11-25 resumability). Nothing
   * is sent again; the response comes under the id the connector chose for this one.
   */
  resume?: ResumeFrom | undefined;
}

/** Where a response stream is resumed from: the request it answers (its upstream id) and an event id seen on it. */
export interface ResumeFrom {
  requestId: JsonRpcId;
  lastEventId: string;
}

/**
 * Where another replica can resume a request's response stream: its upstream session, the
 * request's upstream id, and an event id the upstream gave on that stream
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports, Resumability and Redelivery).
 */
export interface StreamResume extends ResumeFrom {
  session?: string;
}

export interface UpstreamRequest extends OnBehalf {
  method: string;
  params?: Record<string, unknown>;
  /**
   * What the front client declared. A legacy session was initialized once for everyone; on the
   * 2026-07-28 wire capabilities travel with each request, so the upstream learns which questions
   * this caller can answer (elicitation, sampling, roots) and never asks another.
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * Extensions taskgate declares on this request (2026-07-28 only; a legacy session has none):
   * `io.modelcontextprotocol/tasks` where taskgate follows the upstream's own tasks. A result type
   * a declared extension defines (`"task"`) then comes back as the upstream sent it.
   */
  extensions?: Record<string, unknown>;
  /**
   * Aborting does not cancel upstream by itself; it only stops waiting: the promise rejects with
   * `UpstreamError` reason "closed" (the signal's reason as `cause`). Callers send notifications/cancelled.
   */
  signal?: AbortSignal;
  /**
   * Called with a function that stops waiting, with the same effect as aborting `signal` (the
   * argument becomes the error's `cause`). For callers that hold many requests: an AbortSignal with
   * its listener costs about a kilobyte per request, this one closure.
   */
  stopWaiting?: (stop: (reason?: unknown) => void) => void;
  /**
   * Called with the upstream id as soon as it is assigned, before the message is written, so the
   * caller can map notifications/cancelled and related messages to it.
   */
  onId?: (upstreamId: JsonRpcId) => void;
}

/**
 * A message the upstream sent that is not a response to one of our requests.
 * `relatedTo` is the upstream id of the request it belongs to, when the transport says so
 * (HTTP: it arrived on that request's SSE stream). stdio never knows; the caller attributes.
 */
export type UpstreamEvent =
  | { kind: "notification"; message: JsonRpcNotification; relatedTo?: JsonRpcId }
  | { kind: "request"; message: JsonRpcRequest; relatedTo?: JsonRpcId }
  | { kind: "state"; ready: boolean; reason?: string }
  /** Request `relatedTo`'s response stream carries event ids: it can be resumed from `position` (HTTP). */
  | { kind: "stream"; relatedTo: JsonRpcId; position: StreamResume };

export interface InitializeResultLike {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string; [k: string]: unknown };
  instructions?: string;
  [k: string]: unknown;
}

/** The upstream transport failed (not a JSON-RPC error from the server, which is a normal response). */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly reason: "exited" | "unreachable" | "closed" | "protocol" | "timeout",
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/** What taskgate declares to the upstream in its own `initialize`: it relays these to front clients. */
export const GATEWAY_CLIENT_CAPABILITIES = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: { listChanged: true },
} as const;

export const GATEWAY_CLIENT_INFO = { name: "taskgate", version: "0.1.0" } as const;

/** The protocol version taskgate asks the upstream for: jsonrpc/versions.ts, the one list. */
export { UPSTREAM_PROTOCOL_VERSION } from "../jsonrpc/versions.js";
