import type { JsonRpcMessage } from "../../jsonrpc/message.js";
import { MCP_NAME_PARAM, MODERN_VERSION } from "../../jsonrpc/versions.js";
import { GATEWAY_CLIENT_INFO } from "../connector.js";

/**
 * The stateless wire of protocol 2026-07-28 as taskgate speaks it upstream: no `initialize`, no
 * session; every request carries the protocol version, the client's capabilities and identity in
 * `_meta` (https://modelcontextprotocol.io/specification/2026-07-28/basic, "_meta"), and on HTTP
 * the headers that mirror them (SEP-2243, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
 */
export const MODERN_PROTOCOL_VERSION = MODERN_VERSION;

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
/** https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * The questions a client can answer on this wire (MRTR input requests). taskgate declares, per
 * request, only those the front caller declared itself, so the upstream never asks what nobody
 * could answer (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr).
 */
const ANSWERABLE = ["elicitation", "sampling", "roots"] as const;

export function clientCapabilitiesFor(front: Record<string, unknown> | undefined, extensions?: Record<string, unknown>): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const key of ANSWERABLE) if (front?.[key] !== undefined) declared[key] = front[key];
  if (extensions && Object.keys(extensions).length > 0) declared.extensions = extensions;
  return declared;
}

/** `params` with the per-request envelope; the caller's own `_meta` (a progress token) is kept. */
export function withEnvelope(params: Record<string, unknown> | undefined, capabilities: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(params?._meta) ? params._meta : {};
  const envelope = { [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: capabilities, [META_CLIENT_INFO]: GATEWAY_CLIENT_INFO };
  return { ...params, _meta: { ...meta, ...envelope } };
}

/**
 * The HTTP headers a modern request must carry: `MCP-Protocol-Version` equal to its `_meta`,
 * `Mcp-Method`, and `Mcp-Name` where the method names something. Undefined for a message
 * without the envelope (a legacy session's, or a notification).
 */
export function modernHeaders(message: JsonRpcMessage): Record<string, string> | undefined {
  if (!("method" in message)) return undefined;
  const meta = message.params?._meta;
  const version = isObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  if (typeof version !== "string") return undefined;
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": message.method };
  const param = MCP_NAME_PARAM[message.method];
  const name = param === undefined ? undefined : message.params?.[param];
  if (typeof name === "string") headers["mcp-name"] = headerValue(name);
  return headers;
}

/** Values outside printable ASCII go as `=?base64?…?=` (SEP-2243). */
function headerValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value.trim() === value;
  return plain ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
