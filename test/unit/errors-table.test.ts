import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RPC } from "../../src/jsonrpc/codes.js";
import { ERRORS_END, ERRORS_START, errorsReference, withErrorsReference } from "../../src/wire/errors-reference.js";
import { ERRORS, GatewayError, type ErrorKind } from "../../src/wire/errors.js";

const PAGE = readFileSync(resolve(import.meta.dirname, "../../docs/reference/errors.md"), "utf8");

const JSONRPC = "https://www.jsonrpc.org/specification#error_object";
const TRANSPORTS = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports";
const AUTHORIZATION = "https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#error-handling";
const TASKS = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#error-handling";
const MODERN = "https://modelcontextprotocol.io/specification/2026-07-28/basic";

/** What the specifications name for an error taskgate answers with: its JSON-RPC code, its HTTP status, or both. */
const SPEC: Partial<Record<ErrorKind, { code?: number; status?: number; where: string }>> = {
  parse_error: { code: -32700, where: JSONRPC },
  invalid_request: { code: -32600, where: JSONRPC },
  batch_unsupported: { code: -32600, where: JSONRPC },
  internal: { code: -32603, where: JSONRPC },
  invalid_params: { code: -32602, where: JSONRPC },
  task_not_found: { code: -32602, where: TASKS },
  session_required: { status: 400, where: TRANSPORTS },
  session_not_found: { status: 404, where: TRANSPORTS },
  unsupported_protocol_version: { status: 400, where: TRANSPORTS },
  origin_forbidden: { status: 403, where: TRANSPORTS },
  method_not_allowed: { status: 405, where: TRANSPORTS },
  unauthorized: { status: 401, where: AUTHORIZATION },
  insufficient_scope: { status: 403, where: AUTHORIZATION },
  header_mismatch: { code: -32020, status: 400, where: MODERN },
  missing_capability: { code: -32021, status: 400, where: MODERN },
  unsupported_version: { code: -32022, status: 400, where: MODERN },
  missing_meta: { code: -32602, status: 400, where: MODERN },
  method_not_found: { code: -32601, status: 404, where: MODERN },
};

describe("the errors table", () => {
  it("is what docs/reference/errors.md shows (run `npm run docs:errors` after changing it)", () => {
    const start = PAGE.indexOf(ERRORS_START);
    const end = PAGE.indexOf(ERRORS_END);
    expect(start).toBeGreaterThan(0);
    expect(PAGE.slice(start, end + ERRORS_END.length)).toBe(errorsReference());
    // One row per error, each with its status and code.
    for (const row of Object.values(ERRORS)) expect(errorsReference()).toContain(`| ${row.status} | ${row.code} |`);
  });

  it("notices a drifted page", () => {
    const drifted = PAGE.replace("| 404 | -32001 |", "| 404 | -32002 |");
    expect(drifted).not.toBe(PAGE);
    expect(withErrorsReference(drifted)).toBe(PAGE);
  });

  it("answers with the code and status the specifications name, where they name one", () => {
    const named = Object.entries(SPEC).map(([kind, spec]) => {
      const row = ERRORS[kind as ErrorKind];
      return { kind, code: spec.code === undefined ? undefined : row.code, status: spec.status === undefined ? undefined : row.status, where: spec.where };
    });
    expect(named).toEqual(Object.entries(SPEC).map(([kind, spec]) => ({ kind, code: spec.code, status: spec.status, where: spec.where })));
    // A code the specifications do not name is in the range left to implementations (-32000 to -32019, https://modelcontextprotocol.io/specification/2026-07-28/basic).
    const ownCodes = Object.entries(ERRORS).filter(([kind]) => SPEC[kind as ErrorKind]?.code === undefined);
    const spec = new Set(Object.values(SPEC).map((s) => s.code));
    expect(ownCodes.filter(([, row]) => !spec.has(row.code) && (row.code > -32000 || row.code < -32019)).map(([kind]) => kind)).toEqual([]);
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
