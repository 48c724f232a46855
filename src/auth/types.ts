/**
 * The one place a caller's identity is decided. The HTTP layer asks an Authenticator once per
 * request and hands the principal inward; dialects bind sessions and tasks to it, the store
 * checks it in every script. Nothing else looks at credentials.
 */

/** What an authenticator may look at: request headers and the peer address of the connection. */
export interface AuthRequest {
  header(name: string): string | undefined;
  /**
   * The TCP peer (the proxy, behind one); undefined when unknown. A method, read only by the
   * modes that ask (getConnInfo builds objects per call).
   */
  remoteAddress(): string | undefined;
  /** The canonical URL of the MCP endpoint being called (RFC 8707 resource), for audience binding. */
  resource?: string;
}

/**
 * `principal` undefined: auth mode `none`, nobody is identified (legacy sessions then bind to
 * themselves, the modern wire to one shared principal). `scopes`: what the token grants, from
 * the modes whose tokens carry scopes (jwt, oauth); undefined elsewhere.
 * `audience`: the `aud` of a token the mode verified (jwt, oauth), which decides where it may be
 * forwarded (token-audience.ts). `unavailable`: the token could not be checked because the issuer did not answer (503, not 401).
 */
export type AuthResult =
  | { ok: true; principal?: string; scopes?: ReadonlySet<string>; audience?: readonly string[] }
  | { ok: false; error: "invalid_request" | "invalid_token" | "unavailable"; description: string };

export interface Authenticator {
  readonly mode: "none" | "bearer" | "jwt" | "header" | "oauth";
  authenticate(req: AuthRequest): Promise<AuthResult>;
}

/** Principals from every mode share one namespace apart from the unauthenticated ones (`session:…`, `anonymous`). */
export function userPrincipal(name: string): string {
  return `user:${name}`;
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or why there is none. */
export function bearerToken(req: AuthRequest): { token: string } | { missing: true } | { malformed: string } {
  const value = req.header("authorization");
  if (value === undefined || value === "") return { missing: true };
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(value);
  return match ? { token: match[1]! } : { malformed: "Authorization must be 'Bearer <token>'" };
}

export const MISSING: AuthResult = { ok: false, error: "invalid_request", description: "credentials are required" };

/** A token's `aud` claim (RFC 7519 §4.1.3: one string or a list of them) as a list. */
export function audienceOf(claims: Record<string, unknown>): string[] {
  const aud = claims["aud"];
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
}

/**
 * The scopes a token grants: `scope` (RFC 9068 §2.2.3, RFC 7662: space-separated) or `scp`
 * (Entra ID and others: a string or an array of strings).
 */
export function grantedScopes(claims: Record<string, unknown>): ReadonlySet<string> {
  const found = new Set<string>();
  for (const value of [claims["scope"], claims["scp"]]) {
    if (typeof value === "string") value.split(" ").forEach((s) => s && found.add(s));
    else if (Array.isArray(value)) value.forEach((s) => typeof s === "string" && s && found.add(s));
  }
  return found;
}
