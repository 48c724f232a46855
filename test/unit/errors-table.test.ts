import { describe, expect, it } from "vitest";
import { ERRORS, GatewayError } from "../../src/wire/errors.js";
import { RPC } from "../../src/jsonrpc/codes.js";

describe("the errors table", () => {
  it("pins every error's JSON-RPC code and HTTP status", () => {
    const pinned = Object.fromEntries(Object.entries(ERRORS).map(([kind, row]) => [kind, [row.code, row.status]]));
    expect(pinned).toEqual({
      parse_error: [-32700, 400],
      invalid_request: [-32600, 400],
      batch_unsupported: [-32600, 400],
      session_required: [-32600, 400],
      unsupported_protocol_version: [-32600, 400],
      session_not_found: [-32001, 404],
      origin_forbidden: [-32600, 403],
      host_forbidden: [-32600, 403],
      unauthorized: [-32600, 401],
      insufficient_scope: [-32600, 403],
      auth_unavailable: [-32603, 503],
      rate_limited: [-32000, 429],
      too_many_tasks: [-32000, 429],
      too_many_streams: [-32000, 429],
      not_acceptable: [-32600, 406],
      method_not_allowed: [-32600, 405],
      stream_conflict: [-32600, 409],
      payload_too_large: [-32600, 413],
      unsupported_media_type: [-32600, 415],
      upstream_unavailable: [-32603, 503],
      store_unavailable: [-32603, 503],
      shutting_down: [-32603, 503],
      store_format: [-32603, 503],
      internal: [-32603, 200],
      header_mismatch: [-32020, 400],
      missing_capability: [-32021, 400],
      unsupported_version: [-32022, 400],
      missing_meta: [-32602, 400],
      method_not_found: [-32601, 404],
      invalid_params: [-32602, 200],
      task_not_found: [-32602, 200],
      modern_method_not_allowed: [-32600, 405],
    });
  });

  it("renders itself as a JSON-RPC error response with the request id", async () => {
    const res = new GatewayError("session_not_found", undefined, { hint: 1 }).toResponse(7);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32001, message: "Session not found", data: { hint: 1 } } });
  });

  it("never answers 500", () => {
    for (const row of Object.values(ERRORS)) expect(row.status).not.toBe(500);
  });

  it("takes every code from the one list of codes", () => {
    const known = new Set<number>(Object.values(RPC));
    expect(Object.entries(ERRORS).filter(([, row]) => !known.has(row.code))).toEqual([]);
  });
});
