import { describeDeep, tooDeep } from "./depth.js";
import type { JsonRpcMessage } from "./message.js";

/**
 * Decoding of untrusted bytes into one JSON-RPC message. Returns a verdict; the route turns a
 * verdict into the JSON-RPC error (parse → -32700, invalid → -32600).
 *
 * Checked by hand, field by field in the order of the JSON-RPC 2.0 message shapes, with the
 * wording of the schema validation it replaced: on every request and every upstream reply, a
 * schema library's copy of the object and its walk over every key of `params` or `result` cost
 * more than the parse itself. Only the fields taskgate reads are judged; the message is
 * rebuilt with those fields alone, so an unknown top-level key goes no further.
 */
export type Decoded =
  | { ok: true; message: JsonRpcMessage }
  | {
      ok: false;
      kind: "parse_error" | "invalid_request" | "batch_unsupported";
      id: string | number | null;
      detail?: string;
      /** An object without `method`: meant as the response to request `id` (what a transport reading an upstream fails that request with). */
      answer?: true;
      /** Refused for its nesting (`maxDepth`), not its shape. */
      tooDeep?: true;
    };

export interface DecodeLimits {
  /** The deepest nesting of objects and arrays taken; deeper is invalid before anything else is looked at. */
  maxDepth?: number;
}

export function decodeMessage(text: string, limits: DecodeLimits = {}): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, kind: "parse_error", id: null };
  }
  if (Array.isArray(value)) return { ok: false, kind: "batch_unsupported", id: null };
  if (limits.maxDepth !== undefined) {
    const path = tooDeep(value, limits.maxDepth);
    if (path) return answerFlagged(value, { ok: false, kind: "invalid_request", id: idOf(value), detail: describeDeep(path, limits.maxDepth), tooDeep: true });
  }
  return classify(value);
}

function classify(value: unknown): Decoded {
  const id = idOf(value);
  if (typeof value !== "object" || value === null) return { ok: false, kind: "invalid_request", id, detail: "not an object" };
  const m = value as Record<string, unknown>;
  const problem = "method" in m ? requestProblem(m, "id" in m) : "error" in m ? failureProblem(m) : successProblem(m);
  if (problem !== undefined) return answerFlagged(m, { ok: false, kind: "invalid_request", id, detail: problem });
  return { ok: true, message: rebuilt(m) };
}

type Fields = Record<string, unknown>;

function answerFlagged(value: unknown, failure: Extract<Decoded, { ok: false }>): Decoded {
  const isAnswer = typeof value === "object" && value !== null && !("method" in value) && failure.id !== null;
  return isAnswer ? { ...failure, answer: true } : failure;
}

/** MCP gives `params._meta` one shape, an object (basic protocol, "_meta"); an upstream may never answer another (the SDK 1.x server drops it silently), so it is refused here rather than left waiting. */
function recordProblem(m: Fields, key: "params" | "result"): string | undefined {
  const v = m[key];
  if (typeof v !== "object" || v === null || Array.isArray(v)) return `${key}: Invalid input: expected record, received ${typeName(v)}`;
  const meta = (v as Fields)["_meta"];
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) return `${key}._meta: _meta must be an object`;
  return undefined;
}

function versionProblem(m: Fields): string | undefined {
  return m.jsonrpc === "2.0" ? undefined : 'jsonrpc: Invalid input: expected "2.0"';
}

function idProblem(m: Fields, nullable: boolean): string | undefined {
  const v = m.id;
  return isId(v) || (nullable && v === null) ? undefined : "id: Invalid input";
}

function requestProblem(m: Fields, hasId: boolean): string | undefined {
  const method = m.method;
  return (
    versionProblem(m) ??
    (hasId ? idProblem(m, false) : undefined) ??
    (typeof method !== "string" ? `method: Invalid input: expected string, received ${typeName(method)}` : undefined) ??
    (method === "" ? "method: Too small: expected string to have >=1 characters" : undefined) ??
    (m.params === undefined ? undefined : recordProblem(m, "params"))
  );
}

function successProblem(m: Fields): string | undefined {
  return versionProblem(m) ?? idProblem(m, false) ?? recordProblem(m, "result");
}

function failureProblem(m: Fields): string | undefined {
  const e = m.error;
  const head = versionProblem(m) ?? idProblem(m, true);
  if (head !== undefined) return head;
  if (typeof e !== "object" || e === null || Array.isArray(e)) return `error: Invalid input: expected object, received ${typeName(e)}`;
  const { code, message } = e as Fields;
  if (typeof code !== "number") return `error.code: Invalid input: expected number, received ${typeName(code)}`;
  if (!Number.isSafeInteger(code)) return "error.code: Invalid input: expected int, received number";
  if (typeof message !== "string") return `error.message: Invalid input: expected string, received ${typeName(message)}`;
  return undefined;
}

/** The checked fields only, in a new object (unknown top-level keys and error fields stay behind). */
function rebuilt(m: Fields): JsonRpcMessage {
  if ("method" in m) {
    const out: Fields = "id" in m ? { jsonrpc: "2.0", id: m.id, method: m.method } : { jsonrpc: "2.0", method: m.method };
    if (m.params !== undefined) out.params = m.params;
    return out as unknown as JsonRpcMessage;
  }
  if (!("error" in m)) return { jsonrpc: "2.0", id: m.id, result: m.result } as JsonRpcMessage;
  const e = m.error as Fields;
  const error: Fields = { code: e.code, message: e.message };
  if ("data" in e) error.data = e.data;
  return { jsonrpc: "2.0", id: m.id, error } as unknown as JsonRpcMessage;
}

function isId(v: unknown): v is string | number {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** The id to answer an invalid message with, when it has a usable one (JSON-RPC 2.0 §5). */
function idOf(value: unknown): string | number | null {
  if (typeof value !== "object" || value === null || !("id" in value)) return null;
  const id = (value as { id: unknown }).id;
  return isId(id) ? id : null;
}
