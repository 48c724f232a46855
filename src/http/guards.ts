import type { MiddlewareHandler } from "hono";
import { GatewayError } from "./errors.js";

/**
 * Origin allow-list against DNS rebinding (Streamable HTTP transport, security warning).
 * Requests without Origin (non-browser clients) pass; "*" allows every origin.
 */
export function originGuard(allowed: readonly string[]): MiddlewareHandler {
  const all = allowed.includes("*");
  const set = new Set(allowed.map((o) => o.toLowerCase()));
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !all && !set.has(origin.toLowerCase()))
      return new GatewayError("origin_forbidden", origin.slice(0, 200)).toResponse();
    await next();
  };
}

/** POST bodies must be JSON (Streamable HTTP: the body is a JSON-RPC message). */
export const jsonContentType: MiddlewareHandler = async (c, next) => {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") return new GatewayError("unsupported_media_type").toResponse();
  await next();
};
