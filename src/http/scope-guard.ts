import type { JsonRpcMessage } from "../jsonrpc/message.js";
import { GatewayError } from "../wire/errors.js";
import type { ResourceChallenge } from "./resource-metadata.js";

/** An endpoint's configured scopes: for every request, per JSON-RPC method, per tool. */
export interface ScopePolicy {
  required: readonly string[];
  methods: Readonly<Record<string, readonly string[]>>;
  tools: Readonly<Record<string, readonly string[]>>;
}

export const NO_SCOPES: ScopePolicy = { required: [], methods: {}, tools: {} };

export function hasScopes(policy: ScopePolicy): boolean {
  return policy.required.length > 0 || Object.keys(policy.methods).length > 0 || Object.keys(policy.tools).length > 0;
}

/**
 * Every scope one message needs. A `tools/call` is named in its body (`params.name`) and, on the
 * 2026-07-28 wire, in the `Mcp-Name` header as well: both names count, so a message whose header
 * and body disagree cannot borrow the cheaper tool's scopes. The task methods have one name in
 * both task protocols (`tasks/cancel`, `tasks/get`, ...), so one entry covers both.
 */
export function scopesFor(policy: ScopePolicy, message: JsonRpcMessage | undefined, mcpName: string | undefined): string[] {
  const needed = new Set(policy.required);
  const method = message && "method" in message ? message.method : undefined;
  if (method !== undefined) {
    for (const s of own(policy.methods, method)) needed.add(s);
    if (method === "tools/call") {
      const name = message && "params" in message ? message.params?.["name"] : undefined;
      for (const tool of [name, mcpName]) if (typeof tool === "string") for (const s of own(policy.tools, tool)) needed.add(s);
    }
  }
  return [...needed];
}

/**
 * 403 `insufficient_scope` when the token lacks one of `needed` (RFC 6750 §3.1; MCP authorization,
 * Scope Challenge Handling:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#scope-challenge-handling).
 * The challenge names every scope the operation needs, so a client asking again for those keeps
 * what it had. Modes whose credentials carry no scopes grant none.
 */
export function insufficientScope(
  needed: readonly string[],
  granted: ReadonlySet<string> | undefined,
  realm: string,
  resource: ResourceChallenge | undefined,
): GatewayError | undefined {
  const missing = needed.filter((s) => !granted?.has(s));
  if (missing.length === 0) return undefined;
  const challenge = [
    `realm=${quoted(realm)}`,
    `error="insufficient_scope"`,
    `error_description=${quoted(`the token lacks the scope ${missing.join(" ")}`)}`,
    `scope=${quoted(needed.join(" "))}`,
    ...(resource ? [`resource_metadata=${quoted(resource.metadataUrl())}`] : []),
  ];
  return new GatewayError("insufficient_scope", `needs ${missing.join(" ")}`, undefined, { "www-authenticate": `Bearer ${challenge.join(", ")}` });
}

export const quoted = (s: string) => `"${s.replace(/["\\\r\n]/g, "")}"`;

function own(table: Readonly<Record<string, readonly string[]>>, key: string): readonly string[] {
  return Object.hasOwn(table, key) ? (table[key] ?? []) : [];
}
