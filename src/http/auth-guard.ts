import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import type { Authenticator, AuthResult } from "../auth/index.js";
import type { Audit } from "../observability/audit.js";
import { GatewayError } from "./errors.js";
import type { ObservedEnv } from "./observe.js";

/** What the auth step leaves on the request for the routes: the caller, once, from one place. */
export type CallerEnv = { Variables: { principal: string | undefined } } & ObservedEnv;

/**
 * Authenticate every request to an MCP path before anything else reads it. Missing or bad
 * credentials get 401 with a `WWW-Authenticate` challenge (RFC 6750 §3; MCP authorization,
 * Streamable HTTP) and an audit line; nothing of the credential is echoed or logged.
 */
export function authGuard(auth: Authenticator, realm: string, audit: Audit): MiddlewareHandler<CallerEnv> {
  return async (c, next) => {
    // The peer address is read only by the modes that ask for it: getConnInfo builds objects per call.
    const result = await auth.authenticate({
      header: (name) => c.req.header(name),
      get remoteAddress() {
        return remoteAddress(c);
      },
    });
    if (!result.ok) {
      audit.record("auth.failed", undefined, { mode: auth.mode, reason: result.description });
      return new GatewayError("unauthorized", result.description).toResponse(null, { "www-authenticate": challenge(realm, result) });
    }
    c.set("principal", result.principal);
    await next();
  };
}

/** RFC 6750 §3: a request without credentials gets no error code; a rejected one says why. */
export function challenge(realm: string, failure: Extract<AuthResult, { ok: false }>): string {
  const quoted = (s: string) => `"${s.replace(/["\\\r\n]/g, "")}"`;
  if (failure.description === "credentials are required") return `Bearer realm=${quoted(realm)}`;
  return `Bearer realm=${quoted(realm)}, error=${quoted(failure.error)}, error_description=${quoted(failure.description)}`;
}

/** The TCP peer; undefined when the request did not come through the Node server (in-process use). */
function remoteAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}
