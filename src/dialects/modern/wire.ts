import { GatewayError } from "../../wire/errors.js";
import { TextKeyedCache } from "../../util/text-keyed-cache.js";
import type { JsonRpcRequest } from "../../jsonrpc/message.js";

import { isModernVersion, MCP_NAME_PARAM, MODERN_VERSIONS } from "../../jsonrpc/versions.js";

/** The stateless protocol revisions: jsonrpc/versions.ts, the one list. */
export { isModernVersion, MODERN_VERSIONS } from "../../jsonrpc/versions.js";

export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * Methods of the 2026-07-28 wire that taskgate serves; anything else is 404 + -32601, among them
 * what that revision removed (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`,
 * `resources/unsubscribe`; the conformance suite's server-stateless scenario asks for exactly this).
 */
export const MODERN_METHODS = new Set([
  "server/discover",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
  "subscriptions/listen",
]);

/** Results that must carry caching hints (2026-07-28 server/utilities/caching). */
export const CACHEABLE = new Set(["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]);

export function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/** The version a message's `_meta` names, if it names one: that is what makes it a modern request. */
export function metaVersion(params: Record<string, unknown> | undefined): string | undefined {
  const version = metaOf(params)?.[META.protocolVersion];
  return typeof version === "string" ? version : undefined;
}

export interface ModernHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

/**
 * The checks every modern request passes before anything else, in the order the 2026-07-28
 * transport and the MCP conformance suite's server scenarios expect
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports): a header that
 * disagrees with the body, the protocol version included, is HeaderMismatch (-32020) before the
 * version itself is judged (-32022); then the required `_meta`, then whether the method exists on
 * this wire (404, -32601). Returns the validated client capabilities.
 */
export function validateModernRequest(request: JsonRpcRequest, headers: ModernHeaders): Record<string, unknown> {
  const meta = metaOf(request.params);
  const version = meta?.[META.protocolVersion];
  if (typeof version !== "string") throw new GatewayError("missing_meta", `_meta["${META.protocolVersion}"] is required`);
  checkHeaders(request, headers, version);
  if (!isModernVersion(version))
    throw new GatewayError("unsupported_version", version.slice(0, 100), { supported: [...MODERN_VERSIONS], requested: version.slice(0, 100) });
  const caps = meta?.[META.clientCapabilities];
  if (typeof caps !== "object" || caps === null || Array.isArray(caps))
    throw new GatewayError("missing_meta", `_meta["${META.clientCapabilities}"] is required`);
  if (!MODERN_METHODS.has(request.method)) throw new GatewayError("method_not_found", request.method.slice(0, 100));
  return interned(caps as Record<string, unknown>);
}

/**
 * One object for the capabilities many requests declare alike: a call holds its caller's
 * capabilities for as long as it runs, and a detached call may run for hours. Read-only.
 */
const DECLARED = new TextKeyedCache<Record<string, unknown>>(256, 2_048);

function interned(caps: Record<string, unknown>): Record<string, unknown> {
  return DECLARED.get(JSON.stringify(caps), () => caps);
}

/** SEP-2243 standard headers: present, well-formed and equal to the body (400, -32020 otherwise). */
function checkHeaders(request: JsonRpcRequest, headers: ModernHeaders, version: string): void {
  if (headers.protocolVersion !== version) throw new GatewayError("header_mismatch", "MCP-Protocol-Version must equal the _meta protocol version");
  if (decodeHeader(headers.method) !== request.method) throw new GatewayError("header_mismatch", "Mcp-Method must equal the request's method");
  const nameParam = MCP_NAME_PARAM[request.method];
  if (nameParam !== undefined && decodeHeader(headers.name) !== request.params?.[nameParam])
    throw new GatewayError("header_mismatch", `Mcp-Name must equal params.${nameParam}`);
}

const SENTINEL = /^=\?base64\?(.*)\?=$/;
/** RFC 4648 base64 with its padding: the SEP-2243 test cases refuse a value without it. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as SEP-2243 encodes it: `=?base64?{value}?=` carries UTF-8 in canonical base64;
 * anything else is the value itself. Undefined for a wrapper whose content is not canonical
 * base64 or not UTF-8, which can then equal no body value.
 */
export function decodeHeader(value: string | undefined): string | undefined {
  const match = value?.match(SENTINEL);
  if (!match) return value;
  if (!CANONICAL_BASE64.test(match[1]!)) return undefined;
  try {
    return UTF8.decode(Buffer.from(match[1]!, "base64"));
  } catch {
    return undefined;
  }
}

export function declaresTasks(caps: Record<string, unknown>): boolean {
  const extensions = caps.extensions;
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
}
