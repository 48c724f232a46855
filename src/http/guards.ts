import type { MiddlewareHandler } from "hono";
import { GatewayError } from "../wire/errors.js";

/** POST bodies must be JSON (Streamable HTTP: the body is a JSON-RPC message). */
export const jsonContentType: MiddlewareHandler = async (c, next) => {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") return new GatewayError("unsupported_media_type").toResponse();
  await next();
};

/** Listen addresses that are loopback: the defaults for Host and Origin depend on it. */
export const LOOPBACK_LISTEN = new Set(["127.0.0.1", "::1", "localhost"]);
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Host check against DNS rebinding (Streamable HTTP transport, security warning): a page on
 * evil.example whose name was re-pointed at 127.0.0.1 still sends `Host: evil.example`. With an
 * explicit `http.allowedHosts` only those pass; else, bound to loopback, only loopback names do.
 * Bound elsewhere with no list, every Host passes (a proxy or load balancer picks the name).
 */
export function hostGuard(allowedHosts: readonly string[], listenHost: string): MiddlewareHandler {
  const names = allowedHosts.length > 0 ? allowedHosts : LOOPBACK_LISTEN.has(listenHost) ? LOOPBACK_NAMES : [];
  const allowed = new Set(names.map((h) => h.toLowerCase()));
  return async (c, next) => {
    if (allowed.size > 0) {
      const host = c.req.header("host")?.toLowerCase() ?? "";
      if (!allowed.has(host) && !allowed.has(withoutPort(host))) return new GatewayError("host_forbidden", host.slice(0, 200)).toResponse();
    }
    await next();
  };
}

function withoutPort(host: string): string {
  return host.replace(/:\d+$/, "");
}
