import { RPC } from "../jsonrpc/codes.js";
/**
 * How a front request ended, for `mcp_server_operation_duration_seconds`. The JSON-RPC error
 * classes follow JSON-RPC 2.0 §5.1 (https://www.jsonrpc.org/specification#error_object); the
 * refusals are taskgate's own checks before a request reaches its method.
 */
export type Outcome =
  | "ok"
  | "tool_error"
  | "refused_auth"
  | "refused_limit"
  | "refused_bad_input"
  | "parse_error"
  | "invalid_request"
  | "method_not_found"
  | "invalid_params"
  | "internal_error"
  | "server_error"
  | "application_error";

export type Refusal = "auth" | "limit" | "bad_input";

/** Which wire the request came on: legacy (sessions) or modern (2026-07-28); unknown when refused before that was read. */
export type Wire = "legacy" | "modern" | "unknown";

export function outcomeOfCode(code: number): Outcome {
  switch (code) {
    case RPC.PARSE_ERROR:
      return "parse_error";
    case RPC.INVALID_REQUEST:
      return "invalid_request";
    case RPC.METHOD_NOT_FOUND:
      return "method_not_found";
    case RPC.INVALID_PARAMS:
      return "invalid_params";
    case RPC.INTERNAL_ERROR:
      return "internal_error";
    default:
      return code >= -32099 && code <= -32000 ? "server_error" : "application_error";
  }
}

export function outcomeOfRefusal(refusal: Refusal): Outcome {
  return refusal === "auth" ? "refused_auth" : refusal === "limit" ? "refused_limit" : "refused_bad_input";
}

/** A response that carries no JSON-RPC outcome of its own (a 202, a stream, a bare status). */
export function outcomeOfStatus(status: number): Outcome {
  if (status < 400) return "ok";
  if (status === 401 || status === 403) return "refused_auth";
  if (status === 413 || status === 429) return "refused_limit";
  return status < 500 ? "refused_bad_input" : "internal_error";
}
