import type { ScopePolicy } from "../../http/scope-guard.js";
import type { GatewayToolKind, GatewayToolNames } from "./gateway-tools.js";

/** The task method each gateway tool stands for: it needs that method's scopes (upstreams[].scopes.methods). */
const STANDS_FOR: Record<GatewayToolKind, readonly string[]> = {
  status: ["tasks/get"],
  result: ["tasks/get", "tasks/result"],
  cancel: ["tasks/cancel"],
  answer: ["tasks/update"],
};

/**
 * The scope policy with the gateway tools added: calling one needs the scopes of the
 * task method it stands for, besides any configured for its name, so handle mode opens no way
 * around a scope an operator put on tasks/cancel or tasks/update.
 */
export function withGatewayToolScopes(policy: ScopePolicy, names: GatewayToolNames): ScopePolicy {
  const tools: Record<string, readonly string[]> = { ...policy.tools };
  for (const kind of Object.keys(STANDS_FOR) as GatewayToolKind[]) {
    const name = names[kind];
    const needed = new Set([
      ...(Object.hasOwn(tools, name) ? (tools[name] ?? []) : []),
      ...STANDS_FOR[kind].flatMap((m) => (Object.hasOwn(policy.methods, m) ? (policy.methods[m] ?? []) : [])),
    ]);
    if (needed.size > 0) tools[name] = [...needed];
  }
  return { ...policy, tools };
}
