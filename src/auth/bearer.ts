import { createHash } from "node:crypto";
import type { AuthConfig } from "../config/security-schema.js";
import { bearerToken, MISSING, userPrincipal, type AuthRequest, type AuthResult, type Authenticator } from "./types.js";

/**
 * Static bearer tokens. The config holds only their SHA-256 hashes, so a leaked config file or
 * log of it gives no usable token; the presented token is hashed and looked up by its hash.
 */
export class BearerAuthenticator implements Authenticator {
  readonly mode = "bearer" as const;
  private readonly principals: Map<string, string>;

  constructor(config: AuthConfig["bearer"]) {
    this.principals = new Map(config.tokens.map((t) => [t.sha256.toLowerCase(), userPrincipal(t.principal)]));
  }

  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const presented = bearerToken(req);
    if ("missing" in presented) return MISSING;
    if ("malformed" in presented) return { ok: false, error: "invalid_request", description: presented.malformed };
    const principal = this.principals.get(sha256Hex(presented.token));
    return principal ? { ok: true, principal } : { ok: false, error: "invalid_token", description: "unknown token" };
  }
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
