import type { Config, UpstreamConfig } from "../config/schema.js";
import type { Logger } from "../observability/logger.js";
import { ProtectedResources } from "./resource-metadata.js";
import type { ScopePolicy } from "./scope-guard.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** An upstream's scopes from its config: `scopes.required`, `scopes.methods`, and each tool's `scopes`. */
export function scopePolicy(u: UpstreamConfig): ScopePolicy {
  const tools = Object.fromEntries(Object.entries(u.tools).flatMap(([name, t]) => (t.scopes.length > 0 ? [[name, t.scopes]] : [])));
  return { required: u.scopes.required, methods: u.scopes.methods, tools };
}

/** Every scope an upstream names, for its scopes_supported when none are configured. */
function allScopes(u: UpstreamConfig): string[] {
  const policy = scopePolicy(u);
  return [...new Set([...policy.required, ...Object.values(policy.methods).flat(), ...Object.values(policy.tools).flat()])];
}

/** auth mode oauth: the protected resource metadata of every upstream path; undefined in other modes. */
export function protectedResources(config: Config, selfUrl: () => string, logger: Logger): ProtectedResources | undefined {
  const { mode, oauth } = config.auth;
  if (mode !== "oauth" || oauth.issuer === undefined) return undefined;
  if (oauth.publicUrl === undefined && !LOOPBACK.has(config.listen.host))
    logger.warn(
      "auth.oauth.publicUrl is not set: resource URLs and token audiences name the listener's own address, which clients behind a proxy or load balancer do not use; set it to the URL clients connect to",
    );
  const byPath = new Map(config.upstreams.map((u) => [u.path, u]));
  return new ProtectedResources({
    publicUrl: () => oauth.publicUrl ?? selfUrl(),
    authorizationServers: [oauth.issuer],
    scopesSupported: (path) => oauth.scopesSupported ?? allScopes(byPath.get(path)!),
  });
}
