/**
 * The one place a caller's identity is decided. The HTTP layer asks an Authenticator once per
 * request and hands the principal inward; dialects bind sessions and tasks to it, the store
 * checks it in every script. Nothing else looks at credentials.
 */

/** What an authenticator may look at: request headers and the peer address of the connection. */
export interface AuthRequest {
  header(name: string): string | undefined;
  /** The TCP peer (the proxy, behind one); undefined when unknown. */
  remoteAddress: string | undefined;
}

/**
 * `principal` undefined: auth mode `none`, nobody is identified (legacy sessions then bind to
 * themselves, the modern wire to one shared principal).
 */
export type AuthResult =
  | { ok: true; principal?: string }
  | { ok: false; error: "invalid_request" | "invalid_token"; description: string };

export interface Authenticator {
  readonly mode: "none" | "bearer" | "jwt" | "header";
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
