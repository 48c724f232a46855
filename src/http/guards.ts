import type { Context } from "hono";
import { GatewayError } from "../wire/errors.js";

/**
 * A step of an endpoint's request handling (routes.ts): a refusal to answer with, or undefined to
 * go on. Plain functions run in order by the endpoint, not middleware awaiting `next()`: each
 * `async` layer cost every request a promise and a turn of the microtask queue.
 */
export type Check = (c: Context) => Response | undefined;

/** POST bodies must be JSON (Streamable HTTP: the body is a JSON-RPC message). */
export const jsonContentType: Check = (c) =>
  isJsonContentType(c.req.header("content-type")) ? undefined : new GatewayError("unsupported_media_type").toResponse();

export function isJsonContentType(header: string | undefined): boolean {
  if (header === "application/json") return true;
  return (header ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";
}

/** Listen addresses that are loopback: the defaults for Host and Origin depend on it. */
export const LOOPBACK_LISTEN = new Set(["127.0.0.1", "::1", "localhost"]);
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Host check against DNS rebinding (Streamable HTTP transport, security warning): a page on
 * evil.example whose name was re-pointed at 127.0.0.1 still sends `Host: evil.example`. With an
 * explicit `http.allowedHosts` only those pass; else, bound to loopback, only loopback names do.
 * Bound elsewhere with no list, every Host passes (a proxy or load balancer picks the name).
 */
export function hostGuard(allowedHosts: readonly string[], listenHost: string): Check {
  const allows = hostAllowed(allowedHosts, listenHost);
  return (c) => {
    const host = c.req.header("host");
    return allows(host) ? undefined : new GatewayError("host_forbidden", (host ?? "").toLowerCase().slice(0, 200)).toResponse();
  };
}

/** The Host check itself, on the header's value. */
export function hostAllowed(allowedHosts: readonly string[], listenHost: string): (host: string | undefined) => boolean {
  const names = allowedHosts.length > 0 ? allowedHosts : LOOPBACK_LISTEN.has(listenHost) ? LOOPBACK_NAMES : [];
  const allowed = new Set(names.map((h) => h.toLowerCase()));
  if (allowed.size === 0) return () => true;
  return (value) => {
    const host = value?.toLowerCase() ?? "";
    return allowed.has(host) || allowed.has(withoutPort(host));
  };
}

function withoutPort(host: string): string {
  return host.replace(/:\d+$/, "");
}
