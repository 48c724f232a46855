/**
 * Every JSON-RPC error code taskgate answers with, by name: the one list. The errors table
 * (wire/errors.ts) gives each kind of refusal its code from here, plus its HTTP status; code below
 * the HTTP layer (tasks/, upstream/, the relay) names codes from here too, never by number.
 * Pinned by test/unit/errors-table.test.ts.
 */
export const RPC = {
  // JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object).
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  // The implementation-defined range: limits (docs/operations/capacity.md, Limits), and the legacy wire's unknown session
  // (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management).
  SERVER_ERROR: -32000,
  SESSION_NOT_FOUND: -32001,
  // The 2026-07-28 wire (https://modelcontextprotocol.io/specification/2026-07-28/basic).
  HEADER_MISMATCH: -32020,
  MISSING_CAPABILITY: -32021,
  UNSUPPORTED_VERSION: -32022,
  // A call abandoned after a cancel: the upstream will not answer it (LSP's RequestCancelled).
  REQUEST_CANCELLED: -32800,
} as const;

export type RpcCode = (typeof RPC)[keyof typeof RPC];
