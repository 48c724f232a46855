import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * `Authorization: Bearer <admin.token>`, compared in constant time (over digests, so the length
 * of the token does not leak either). Anything else is 401 with a challenge (RFC 6750).
 */
export function requireToken(token: string): MiddlewareHandler {
  const expected = digest(token);
  return async (c, next) => {
    const given = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (given === undefined || !timingSafeEqual(digest(given), expected))
      return c.json({ error: "a valid admin token is required" }, 401, { "www-authenticate": 'Bearer realm="taskgate-admin"' });
    await next();
  };
}
