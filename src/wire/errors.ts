import type { JsonRpcId, JsonRpcMessage } from "../jsonrpc/message.js";
import { StoreFormatError } from "../store/format.js";
import { StoreUnavailableError, StoreUnconfirmedError } from "../store/contract.js";
import { TaskLimitError } from "../tasks/admission.js";
import { ShuttingDownError } from "../tasks/types.js";
import type { Refusal } from "../observability/request-outcome.js";
import { tagReply } from "./reply-outcome.js";

/**
 * Every error taskgate itself produces, with its JSON-RPC code and HTTP status: the one table.
 * Errors from the upstream (a tool's JSON-RPC error) are relayed untouched and never pass here.
 * docs/reference/errors.md shows it (generated: `npm run docs:errors`); test/unit/errors-table.test.ts
 * checks the page against it and it against the specifications where they name a code or status.
 */
export const ERRORS = {
  parse_error: { code: -32700, status: 400, message: "Parse error: the body is not valid JSON" },
  invalid_request: { code: -32600, status: 400, message: "Invalid Request" },
  batch_unsupported: { code: -32600, status: 400, message: "Invalid Request: JSON-RPC batches are not supported" },
  session_required: { code: -32600, status: 400, message: "Bad Request: Mcp-Session-Id header is required" },
  unsupported_protocol_version: { code: -32600, status: 400, message: "Bad Request: unsupported MCP-Protocol-Version" },
  session_not_found: { code: -32001, status: 404, message: "Session not found" },
  origin_forbidden: { code: -32600, status: 403, message: "Forbidden: Origin not allowed" },
  host_forbidden: { code: -32600, status: 403, message: "Forbidden: Host not allowed" },
  // RFC 9112 §3.2: a request with an invalid Host field is answered 400.
  host_invalid: { code: -32600, status: 400, message: "Bad Request: invalid Host header" },
  unauthorized: { code: -32600, status: 401, message: "Unauthorized" },
  // RFC 6750 §3.1: a valid token without the scope the request needs.
  insufficient_scope: { code: -32600, status: 403, message: "Forbidden: insufficient scope" },
  auth_unavailable: { code: -32603, status: 503, message: "Service Unavailable: the token could not be checked" },
  // Limits (docs/operations/capacity.md, Limits): -32000 is in the implementation-defined range (https://modelcontextprotocol.io/specification/2026-07-28/basic).
  rate_limited: { code: -32000, status: 429, message: "Too Many Requests" },
  too_many_tasks: { code: -32000, status: 429, message: "Too many active tasks for this caller" },
  too_many_streams: { code: -32000, status: 429, message: "Too many open streams for this caller" },
  not_acceptable: { code: -32600, status: 406, message: "Not Acceptable" },
  method_not_allowed: { code: -32600, status: 405, message: "Method Not Allowed" },
  stream_conflict: { code: -32600, status: 409, message: "Conflict: this session already has a GET stream open on this replica" },
  payload_too_large: { code: -32600, status: 413, message: "Payload Too Large" },
  unsupported_media_type: { code: -32600, status: 415, message: "Unsupported Media Type: Content-Type must be application/json" },
  upstream_unavailable: { code: -32603, status: 503, message: "Upstream unavailable" },
  store_unavailable: { code: -32603, status: 503, message: "task store unavailable" },
  store_unconfirmed: { code: -32603, status: 503, message: "the task store could not confirm the write" },
  shutting_down: { code: -32603, status: 503, message: "taskgate is shutting down" },
  // A replica of a version that cannot work with the store's format (docs/operations/upgrading.md).
  store_format: { code: -32603, status: 503, message: "this taskgate replica cannot work with the task store's format; another replica may" },
  internal: { code: -32603, status: 200, message: "Internal error" },
  // The modern (2026-07-28) wire, https://modelcontextprotocol.io/specification/2026-07-28/basic and the extension's errors, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md.
  header_mismatch: { code: -32020, status: 400, message: "Header mismatch" },
  missing_capability: { code: -32021, status: 400, message: "Missing required client capability" },
  unsupported_version: { code: -32022, status: 400, message: "Unsupported protocol version" },
  missing_meta: { code: -32602, status: 400, message: "Invalid params: missing required _meta" },
  method_not_found: { code: -32601, status: 404, message: "Method not found" },
  invalid_params: { code: -32602, status: 200, message: "Invalid params" },
  task_not_found: { code: -32602, status: 200, message: "Failed to retrieve task: Task not found" },
  modern_method_not_allowed: { code: -32600, status: 405, message: "Method Not Allowed: protocol 2026-07-28 has no sessions and no GET stream" },
} as const satisfies Record<string, { code: number; status: number; message: string }>;

export type ErrorKind = keyof typeof ERRORS;

/**
 * The errors that refuse a request before its method runs, by reason: counted as refusals in
 * `mcp_server_operation_duration_seconds` (docs/reference/metrics.md). Every other error counts by
 * its JSON-RPC code.
 */
const REFUSALS: Partial<Record<ErrorKind, Refusal>> = {
  unauthorized: "auth",
  insufficient_scope: "auth",
  origin_forbidden: "auth",
  host_forbidden: "auth",
  host_invalid: "bad_input",
  rate_limited: "limit",
  too_many_tasks: "limit",
  too_many_streams: "limit",
  payload_too_large: "limit",
  parse_error: "bad_input",
  invalid_request: "bad_input",
  batch_unsupported: "bad_input",
  session_required: "bad_input",
  unsupported_protocol_version: "bad_input",
  not_acceptable: "bad_input",
  method_not_allowed: "bad_input",
  unsupported_media_type: "bad_input",
  header_mismatch: "bad_input",
  unsupported_version: "bad_input",
  missing_meta: "bad_input",
  modern_method_not_allowed: "bad_input",
};

/** The table's HTTP status of each error object `toBody` built. */
const statuses = new WeakMap<object, number>();

/** An error taskgate answers with; it knows its JSON-RPC code and HTTP status from the table. */
export class GatewayError extends Error {
  readonly code: number;
  readonly status: number;

  constructor(
    readonly kind: ErrorKind,
    detail?: string,
    readonly data?: unknown,
    /** Headers the answer carries whoever renders it (a challenge). */
    readonly headers: Record<string, string> = {},
  ) {
    const row = ERRORS[kind];
    super(detail ? `${row.message}: ${detail}` : row.message);
    this.name = "GatewayError";
    this.code = row.code;
    this.status = row.status;
  }

  /**
   * The JSON-RPC error response body, with the request id when one is known. Its error object
   * remembers the table's HTTP status, so a reply that answers it as a plain JSON body (CallReply)
   * answers with that status too.
   */
  toBody(id: JsonRpcId | null = null) {
    const error: { code: number; message: string; data?: unknown } = { code: this.code, message: this.message };
    if (this.data !== undefined) error.data = this.data;
    statuses.set(error, this.status);
    return { jsonrpc: "2.0" as const, id, error };
  }

  toResponse(id: JsonRpcId | null = null, headers: Record<string, string> = {}): Response {
    const refusal = REFUSALS[this.kind];
    const response = Response.json(this.toBody(id), { status: this.status, headers: { ...this.headers, ...headers } });
    return tagReply(response, refusal ? { code: this.code, refusal } : { code: this.code });
  }
}

/** The HTTP status of an error body built from the table (toBody); undefined for any other message. */
export function httpStatusOf(message: JsonRpcMessage): number | undefined {
  return "error" in message ? statuses.get(message.error) : undefined;
}

/**
 * The one mapping from what went wrong inside taskgate to what the client is told. The store not
 * answering is "task store unavailable" with 503 wherever it happens: the request may succeed if
 * retried (RFC 9110 §15.6.4), and a load balancer may send the retry to a replica that reaches
 * the store, where 200 with -32603 would read as this request's final answer.
 */
export function wireError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof StoreUnconfirmedError) return new GatewayError("store_unconfirmed", err.cause instanceof Error ? err.cause.message : undefined);
  if (err instanceof StoreUnavailableError) return new GatewayError("store_unavailable");
  if (err instanceof TaskLimitError) return new GatewayError("too_many_tasks", err.message);
  if (err instanceof ShuttingDownError) return new GatewayError("shutting_down");
  if (err instanceof StoreFormatError) return new GatewayError("store_format");
  return new GatewayError("internal");
}

/** An error that is neither taskgate's own nor one the table names: a bug, logged by whoever sees it. */
export function isUnexpected(err: unknown): boolean {
  return !(
    err instanceof GatewayError ||
    err instanceof StoreUnavailableError ||
    err instanceof TaskLimitError ||
    err instanceof ShuttingDownError ||
    err instanceof StoreFormatError
  );
}

/**
 * Run a store operation; the store not answering becomes "task store unavailable" (-32603, 503),
 * and a full task quota "too many active tasks" (-32000, 429) — `wireError`.
 */
export function storeCall<T>(op: () => Promise<T>): Promise<T>;
/** `map` applied to the value in the same `then` that maps a failure: one promise, not two (a poll comes through here). */
export function storeCall<T, U>(op: () => Promise<T>, map: (value: T) => U): Promise<U>;
export function storeCall<T, U>(op: () => Promise<T>, map?: (value: T) => U): Promise<T | U> {
  // Not an async function: a poll passes through here, and each async layer is one more promise.
  try {
    return map ? op().then(map, asWireError) : op().catch(asWireError);
  } catch (err) {
    return Promise.reject(isUnexpected(err) ? err : wireError(err));
  }
}

function asWireError(err: unknown): never {
  throw isUnexpected(err) ? err : wireError(err);
}
