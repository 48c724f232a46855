import type { IncomingMessage } from "node:http";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import type { Authenticator, AuthRequest, AuthResult } from "../auth/index.js";
import type { Audit } from "../observability/audit.js";
import { GatewayError } from "../wire/errors.js";
import type { LogContext } from "../observability/log-context.js";
import type { ObservedEnv } from "./observe.js";
import type { ResourceChallenge } from "./resource-metadata.js";
import { insufficientScope, quoted } from "./scope-guard.js";

/** What the auth step leaves on the request for the routes: the caller, once, from one place. */
export type CallerEnv = {
  Variables: { principal: string | undefined; scopes: ReadonlySet<string> | undefined; audience: readonly string[] | undefined };
} & ObservedEnv;

/** What the challenges of one endpoint name: its resource metadata (oauth mode) and the scopes every request needs. */
export interface EndpointChallenge {
  resource: ResourceChallenge | undefined;
  requiredScopes: readonly string[];
}

/**
 * Authenticate every request to an MCP path before anything else reads it. Missing or bad
 * credentials get 401 with a `WWW-Authenticate` challenge (RFC 6750 §3; MCP authorization,
 * Streamable HTTP) and an audit line; nothing of the credential is echoed or logged. In oauth mode
 * the challenge names the resource metadata (RFC 9728 §5.1), so a client can find where to get a
 * token. A token without the endpoint's required scopes gets 403 `insufficient_scope`.
 */
export function authGuard(
  auth: Authenticator,
  realm: string,
  audit: Audit,
  endpoint: EndpointChallenge,
): (c: Context<CallerEnv>) => Response | undefined | Promise<Response | undefined> {
  const check = callerCheck(auth, realm, audit, endpoint);
  if (!check) return () => undefined;
  const found = (c: Context<CallerEnv>, caller: Caller): undefined => {
    c.set("principal", caller.principal);
    c.set("scopes", caller.scopes);
    c.set("audience", caller.audience);
    return undefined;
  };
  return (c) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const before = incoming && foundBefore.get(incoming);
    if (before) return found(c, before);
    return check(
      {
        header: (name) => c.req.header(name),
        remoteAddress: () => remoteAddress(c),
      },
      c.get("logContext"),
    ).then((caller) => (caller instanceof Response ? caller : found(c, caller)));
  };
}

/**
 * Callers the direct path (direct-path.ts) found before it handed their request on to the app: the
 * app's auth step takes them as found instead of asking again (a JWT verified twice, an
 * introspection asked twice). Keyed by Node's request, so it lives no longer than the request.
 */
const foundBefore = new WeakMap<IncomingMessage, Caller>();

export function authenticatedBefore(req: IncomingMessage, caller: Caller): void {
  foundBefore.set(req, caller);
}

/** Who the auth step found: what it leaves on the request. */
export interface Caller {
  principal: string | undefined;
  scopes: ReadonlySet<string> | undefined;
  audience: readonly string[] | undefined;
}

/**
 * The auth step on a request's headers and peer: the caller, or the refusal to answer with.
 * Undefined when there is nothing to check: mode none names no caller (its principal, scopes and
 * audience stay unset), and with no scope required of every request there is nothing to await.
 */
export function callerCheck(
  auth: Authenticator,
  realm: string,
  audit: Audit,
  endpoint: EndpointChallenge,
): ((req: Omit<AuthRequest, "resource">, context?: LogContext) => Promise<Caller | Response>) | undefined {
  if (auth.mode === "none" && endpoint.requiredScopes.length === 0) return undefined;
  return async (req, context) => {
    const resource = endpoint.resource?.resource();
    const result = await auth.authenticate(
      resource === undefined
        ? req
        : {
            header: req.header,
            remoteAddress: req.remoteAddress,
            resource,
          },
    );
    if (!result.ok) {
      audit.record("auth.failed", undefined, { mode: auth.mode, reason: result.description }, context);
      if (result.error === "unavailable") return new GatewayError("auth_unavailable").toResponse(null, { "retry-after": "5" });
      return new GatewayError("unauthorized", result.description).toResponse(null, { "www-authenticate": challenge(realm, result, endpoint) });
    }
    const refused = insufficientScope(endpoint.requiredScopes, result.scopes, realm, endpoint.resource);
    if (refused) {
      audit.record("auth.failed", undefined, { mode: auth.mode, reason: "insufficient scope" }, context);
      return refused.toResponse();
    }
    return { principal: result.principal, scopes: result.scopes, audience: result.audience };
  };
}

/**
 * RFC 6750 §3: a request without credentials gets no error code; a rejected one says why. With a
 * resource, `resource_metadata` (RFC 9728 §5.1) and the scopes every request needs (MCP
 * authorization, Protected Resource Metadata Discovery Requirements).
 */
export function challenge(realm: string, failure: Extract<AuthResult, { ok: false }>, endpoint?: EndpointChallenge): string {
  const parts = [`realm=${quoted(realm)}`];
  if (failure.description !== "credentials are required") parts.push(`error=${quoted(failure.error)}`, `error_description=${quoted(failure.description)}`);
  if (endpoint?.resource) parts.push(`resource_metadata=${quoted(endpoint.resource.metadataUrl())}`);
  if (endpoint && endpoint.requiredScopes.length > 0) parts.push(`scope=${quoted(endpoint.requiredScopes.join(" "))}`);
  return `Bearer ${parts.join(", ")}`;
}

/** The TCP peer; undefined when the request did not come through the Node server (in-process use). */
function remoteAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}
