import { ERRORS, type ErrorKind } from "./errors.js";

/**
 * When taskgate answers with each error of the table (wire/errors.ts): the words of the errors
 * reference, docs/reference/errors.md, whose table is generated from this and the table
 * (`npm run docs:errors`). A Record over every kind: a new error without words here does not compile.
 */
export const ERROR_CONDITIONS: Record<ErrorKind, string> = {
  parse_error: "body is not JSON",
  invalid_request:
    "not a JSON-RPC message; nested deeper than 64 levels (checked right after authentication); `params._meta` present but not an object; 2026-07-28: a client's answer to a server request",
  batch_unsupported: "a JSON-RPC batch",
  session_required: "no `Mcp-Session-Id` on a non-`initialize` request",
  unsupported_protocol_version: "unsupported `MCP-Protocol-Version` header",
  session_not_found: "unknown or ended session",
  origin_forbidden:
    '`Origin` not allowed: not in `http.allowedOrigins`, or with no list not a loopback page on a loopback listener (requests without Origin pass; `"*"` allows all)',
  host_forbidden: "`Host` not allowed (`http.allowedHosts`; on loopback only loopback names by default)",
  host_invalid: "`Host` no URL can be built from (a port above 65535, characters a host cannot have): on every path and method, before any other check",
  unauthorized: "missing or bad credentials (with `WWW-Authenticate`; in `oauth` mode naming `resource_metadata`)",
  insufficient_scope: 'a valid token without a scope the request needs (`WWW-Authenticate: … error="insufficient_scope"`)',
  auth_unavailable: "`oauth` mode: the token could not be checked because the identity provider did not answer (`Retry-After`)",
  rate_limited: "the caller's tasks/* rate limit (with `Retry-After`)",
  too_many_tasks: "the caller's limit of active tasks (with `Retry-After`)",
  too_many_streams: "the caller's limit of open SSE streams (with `Retry-After`)",
  not_acceptable: "`Accept` allows neither JSON nor SSE; GET without `text/event-stream`",
  method_not_allowed: "any other HTTP method",
  stream_conflict: "a second GET stream for a session on the same replica",
  payload_too_large: "body over `http.maxBodyBytes` (default 4 MiB)",
  unsupported_media_type: "`Content-Type` not `application/json`",
  upstream_unavailable: "upstream not initialized (on `initialize`, or a 2026-07-28 call)",
  store_unavailable: "store not answering",
  store_unconfirmed:
    "an acknowledged write (a task handle, an answer, a cancel) reached the Redis primary but not its replicas within `store.waitTimeoutMs` (`store.waitForReplicas`), or the primary did not confirm its AOF fsync (`store.waitForAof`): it may or may not be there, so it is not acknowledged; the message says which",
  shutting_down: "draining (after SIGTERM/SIGINT): `initialize`, or a call that would become a task",
  store_format: "the task store's format is one this replica cannot work with (a newer version moved past it); `/readyz` says so too",
  internal: "a bug of taskgate's while answering a request that was accepted (logged)",
  header_mismatch: "2026-07-28: header missing or not matching the body",
  missing_capability: "2026-07-28: extension needed but not declared",
  unsupported_version: "2026-07-28: unsupported protocol version (`data.supported`)",
  missing_meta: "2026-07-28: required `_meta` missing",
  method_not_found: "2026-07-28: method not in the protocol (incl. `ping`, `tasks/result`, `tasks/list`)",
  invalid_params:
    "bad params of a task method (a `taskId` that is not a string, a bad cursor, a cancel of an ended task); 2026-07-28: forged, malformed or expired MRTR `requestState`; `inputResponses` (or an answer to a question) over `limits.maxInputResponsesBytes`",
  task_not_found: "unknown task (both task protocols), also another principal's",
  modern_method_not_allowed: "2026-07-28: GET or DELETE without a session",
};

export const ERRORS_START = "<!-- errors-reference:start (npm run docs:errors writes this table) -->";
export const ERRORS_END = "<!-- errors-reference:end -->";

/** The table of docs/reference/errors.md, markers included: one row per error, in the table's order. */
export function errorsReference(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const rows = (Object.keys(ERRORS) as ErrorKind[]).map((kind) => {
    const { code, status, message } = ERRORS[kind];
    return `| ${cell(ERROR_CONDITIONS[kind])} | ${status} | ${code} | ${cell(message)} |`;
  });
  return [ERRORS_START, "| condition | HTTP | JSON-RPC code | message |", "| --- | --- | --- | --- |", ...rows, ERRORS_END].join("\n");
}

/** `page` with its table replaced by the generated one; undefined when it has no markers. */
export function withErrorsReference(page: string): string | undefined {
  const start = page.indexOf(ERRORS_START);
  const end = page.indexOf(ERRORS_END);
  if (start < 0 || end < start) return undefined;
  return page.slice(0, start) + errorsReference() + page.slice(end + ERRORS_END.length);
}
