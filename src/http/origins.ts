import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { GatewayError } from "../wire/errors.js";
import { LOOPBACK_LISTEN, type Check } from "./guards.js";

const LOOPBACK_ORIGIN_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Which Origins may call: the configured list, or, on a loopback listener with none, loopback pages. */
export interface OriginPolicy {
  allows(origin: string): boolean;
  /** Why an Origin was refused, naming the setting that would let it in. */
  refusal(origin: string): string;
}

/**
 * `http.allowedOrigins` ("*" allows all). With no list, a listener bound to loopback lets pages
 * served from loopback (http(s)://localhost, 127.0.0.1, [::1], any port) call, such as a local
 * inspector's UI; a page from any other origin is refused, so a page whose name was re-pointed at
 * 127.0.0.1 (DNS rebinding) cannot (Streamable HTTP transport, security warning:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning).
 * Bound elsewhere with no list, every Origin is refused.
 */
export function originPolicy(allowedOrigins: readonly string[], listenHost: string): OriginPolicy {
  const listed = new Set(allowedOrigins.map((o) => o.toLowerCase()));
  const all = listed.has("*");
  const loopbackDefault = listed.size === 0 && LOOPBACK_LISTEN.has(listenHost);
  return {
    allows: (origin) => all || listed.has(origin.toLowerCase()) || (loopbackDefault && isLoopbackOrigin(origin)),
    refusal: (origin) =>
      loopbackDefault
        ? `${origin.slice(0, 200)}: without http.allowedOrigins only loopback pages may call; list this origin in http.allowedOrigins`
        : `${origin.slice(0, 200)} is not in http.allowedOrigins`,
  };
}

function isLoopbackOrigin(origin: string): boolean {
  if (!/^https?:\/\//i.test(origin)) return false;
  try {
    return LOOPBACK_ORIGIN_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/** Requests without Origin (non-browser clients) pass; an Origin the policy refuses gets 403. */
export function originGuard(policy: OriginPolicy): Check {
  return (c) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !policy.allows(origin)) return new GatewayError("origin_forbidden", policy.refusal(origin)).toResponse();
    return undefined;
  };
}

/** What a page must be able to read from a response: the session, the version, the auth challenge. */
const EXPOSED = ["Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate", "Retry-After"];

/**
 * CORS for the Origins the guard let through (after it): preflight `OPTIONS` answered with the
 * endpoint's methods and whatever request headers the page asks for (Authorization, Content-Type,
 * Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, SEP-2243's
 * Mcp-Param-*: the origin is trusted already, and the Mcp-Param-* names depend on each tool), and
 * every response, SSE included, carries the origin echoed with `Vary: Origin` and exposes the
 * headers above. Requests without Origin skip it, so non-browser clients pay nothing for it.
 */
export function corsForAllowed(methods: readonly string[]): (c: Context, serve: () => Promise<Response>) => Promise<Response> {
  const handler = cors({ origin: (origin) => origin || null, allowMethods: [...methods], exposeHeaders: EXPOSED, maxAge: 600 });
  return (c, serve) => {
    if (c.req.header("origin") === undefined) return serve();
    return corsAround(handler, c, serve);
  };
}

/** hono's cors step around `serve`: a preflight answered by it, else the response with its headers added. */
async function corsAround(handler: MiddlewareHandler, c: Context, serve: () => Promise<Response>): Promise<Response> {
  const preflight = await handler(c, async () => {
    c.res = await serve();
  });
  return preflight instanceof Response ? preflight : c.res;
}
