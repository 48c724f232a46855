import { z } from "zod";
import { describeDeep, tooDeep } from "./depth.js";
import type { JsonRpcMessage } from "./message.js";

/**
 * Decoding of untrusted bytes into one JSON-RPC message. Returns a verdict; the route turns a
 * verdict into the JSON-RPC error (parse → -32700, invalid → -32600).
 */
const Id = z.union([z.string(), z.number().finite()]);
/**
 * MCP gives `params._meta` one shape, an object (basic protocol, "_meta"). An upstream may never
 * answer a request whose `_meta` is anything else (the SDK 1.x server drops it silently), so such a
 * request is refused here rather than left waiting.
 */
const Params = z.record(z.string(), z.unknown()).refine((p) => p["_meta"] === undefined || (typeof p["_meta"] === "object" && p["_meta"] !== null && !Array.isArray(p["_meta"])), {
  message: "_meta must be an object",
  path: ["_meta"],
});

const Request = z.object({ jsonrpc: z.literal("2.0"), id: Id, method: z.string().min(1), params: Params.optional() });
const Notification = z.object({ jsonrpc: z.literal("2.0"), method: z.string().min(1), params: Params.optional() });
const ErrorObject = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });
const Success = z.object({ jsonrpc: z.literal("2.0"), id: Id, result: Params });
const Failure = z.object({ jsonrpc: z.literal("2.0"), id: Id.nullable(), error: ErrorObject });

export type Decoded =
  | { ok: true; message: JsonRpcMessage }
  | { ok: false; kind: "parse_error" | "invalid_request" | "batch_unsupported"; id: string | number | null; detail?: string };

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
    if (path) return { ok: false, kind: "invalid_request", id: idOf(value), detail: describeDeep(path, limits.maxDepth) };
  }
  return classify(value);
}

function classify(value: unknown): Decoded {
  const id = idOf(value);
  if (typeof value !== "object" || value === null) return { ok: false, kind: "invalid_request", id, detail: "not an object" };
  const schema = "method" in value ? ("id" in value ? Request : Notification) : "error" in value ? Failure : Success;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "message";
    return { ok: false, kind: "invalid_request", id, detail: `${where}: ${issue?.message ?? "malformed"}` };
  }
  return { ok: true, message: parsed.data as JsonRpcMessage };
}

/** The id to answer an invalid message with, when it has a usable one (JSON-RPC 2.0 §5). */
function idOf(value: unknown): string | number | null {
  if (typeof value !== "object" || value === null || !("id" in value)) return null;
  const id = (value as { id: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}
