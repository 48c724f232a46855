import { audienceOf, bearerToken } from "./types.js";

/**
 * Token passthrough
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/security_best_practices#token-passthrough):
 * a client's token goes on to an upstream only when the token was minted for that upstream, that is
 * when its `aud` names the upstream's URL. A token for taskgate alone, an opaque token and a request
 * without one are not forwarded, in every auth mode.
 *
 * `verified`: the audience of a token the auth mode checked (jwt, oauth). The other modes check no
 * token, so its claims are read unverified: a forged `aud` only sends the forged token to the
 * upstream, which checks it itself, in place of taskgate's own credentials.
 */
export function forwardableAuthorization(authorization: string | undefined, verified: readonly string[] | undefined, upstream: string): string | undefined {
  if (authorization === undefined) return undefined;
  const audience = verified ?? unverifiedAudience(authorization);
  return audience.includes(upstream) ? authorization : undefined;
}

function unverifiedAudience(authorization: string): string[] {
  const presented = bearerToken({ header: () => authorization, remoteAddress: () => undefined });
  const payload = "token" in presented ? presented.token.split(".") : [];
  if (payload.length !== 3) return [];
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload[1]!, "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null ? audienceOf(claims as Record<string, unknown>) : [];
  } catch {
    return [];
  }
}
