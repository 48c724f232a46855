import { createLocalJWKSet, errors, importSPKI, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { AuthConfig } from "../config/security-schema.js";
import { audienceOf, bearerToken, grantedScopes, MISSING, userPrincipal, type AuthRequest, type AuthResult, type Authenticator } from "./types.js";

type JwtConfig = AuthConfig["jwt"];
type Key = Uint8Array | Awaited<ReturnType<typeof importSPKI>> | JWTVerifyGetKey;

/**
 * Bearer JWTs: signature (HS256 secret, or RS256/ES256 public key or JWKS), `exp` (required),
 * `nbf`, and `iss`/`aud` when configured. The principal is the configured claim, a string.
 * Keys are fixed at start: a JWKS is a local set read from the config, never fetched per request.
 */
export class JwtAuthenticator implements Authenticator {
  readonly mode = "jwt" as const;

  private constructor(
    private readonly config: JwtConfig,
    private readonly key: Key,
    private readonly algorithms: string[],
  ) {}

  static async create(config: JwtConfig): Promise<JwtAuthenticator> {
    if (config.secret !== undefined) return new JwtAuthenticator(config, new TextEncoder().encode(config.secret), config.algorithms ?? ["HS256"]);
    const algorithms = config.algorithms ?? ["RS256", "ES256"];
    if (config.jwks !== undefined) return new JwtAuthenticator(config, createLocalJWKSet(config.jwks as never), algorithms);
    if (config.publicKey === undefined) throw new Error("auth.jwt: no key configured");
    // A PEM key belongs to one algorithm; the first configured one that imports it is it.
    for (const alg of algorithms) {
      const key = await importSPKI(config.publicKey, alg).catch(() => undefined);
      if (key) return new JwtAuthenticator(config, key, [alg]);
    }
    throw new Error(`auth.jwt.publicKey is not an SPKI PEM key for ${algorithms.join(" or ")}`);
  }

  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const presented = bearerToken(req);
    if ("missing" in presented) return MISSING;
    if ("malformed" in presented) return { ok: false, error: "invalid_request", description: presented.malformed };
    try {
      const { payload } = await jwtVerify(presented.token, this.key as Uint8Array, this.options());
      const name = payload[this.config.principalClaim];
      if (typeof name !== "string" || name === "") return invalid(`the token has no '${this.config.principalClaim}' claim`);
      return { ok: true, principal: userPrincipal(name), scopes: grantedScopes(payload), audience: audienceOf(payload) };
    } catch (err) {
      return invalid(reason(err));
    }
  }

  private options() {
    const { issuer, audience, clockToleranceMs } = this.config;
    return {
      algorithms: this.algorithms,
      requiredClaims: ["exp"],
      clockTolerance: Math.floor(clockToleranceMs / 1000),
      ...(issuer !== undefined ? { issuer } : {}),
      // `any` (warned about at start) checks no audience; the schema requires one or the other.
      ...(audience !== undefined && audience !== "any" ? { audience } : {}),
    };
  }
}

export function invalid(description: string): AuthResult {
  return { ok: false, error: "invalid_token", description };
}

/** Says what is wrong with the token, never echoing it or its claims' values. */
export function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "the token has expired";
  if (err instanceof errors.JWTClaimValidationFailed) return `the token's '${err.claim}' claim is not accepted`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not accepted";
  if (err instanceof errors.JWKSNoMatchingKey) return "no key matches the token";
  return "the token is not a valid JWT";
}
