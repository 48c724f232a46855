import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { IntrospectionResponse } from "oauth4webapi";
import type { OAuthConfig } from "../../config/oauth-schema.js";
import { invalid, reason } from "../jwt.js";
import { audienceOf, bearerToken, grantedScopes, MISSING, userPrincipal, type AuthRequest, type AuthResult, type Authenticator } from "../types.js";
import { Introspector } from "./introspection.js";
import { IssuerMetadata } from "./issuer.js";

/**
 * taskgate as an OAuth 2.1 resource server (MCP authorization, Token Handling:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#token-handling).
 * JWT access tokens are verified against the issuer's JWKS, fetched over HTTP and cached by jose:
 * an unknown `kid` fetches the set again (at most once per `jwksCooldownMs`), and keys older than
 * `jwksMaxAgeMs` are fetched again, so a rotated key needs no restart. The audience must be this
 * resource (RFC 8707). Opaque tokens go to introspection (RFC 7662) when it is configured.
 */
export class OAuthAuthenticator implements Authenticator {
  readonly mode = "oauth" as const;
  private readonly issuer: string;
  private readonly metadata: IssuerMetadata;
  private readonly introspector: Introspector | undefined;
  private remoteKeys: Promise<JWTVerifyGetKey> | undefined;

  constructor(
    private readonly config: OAuthConfig,
    private readonly clock: () => number = Date.now,
  ) {
    if (config.issuer === undefined) throw new Error("auth.oauth.issuer is required");
    this.issuer = config.issuer;
    this.metadata = new IssuerMetadata(new URL(config.issuer), config.fetchTimeoutMs, config.jwksCooldownMs, clock);
    this.introspector = config.introspection && new Introspector(config.introspection, config.issuer, this.metadata, config.fetchTimeoutMs, clock);
  }

  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const presented = bearerToken(req);
    if ("missing" in presented) return MISSING;
    if ("malformed" in presented) return { ok: false, error: "invalid_request", description: presented.malformed };
    const audience = this.config.audience ?? (req.resource === undefined ? [] : [req.resource]);
    if (isJwt(presented.token)) return this.verifyJwt(presented.token, audience);
    if (this.introspector) return this.verifyOpaque(this.introspector, presented.token, audience);
    return invalid("the token is not a JWT and introspection is not configured");
  }

  private async verifyJwt(token: string, audience: string[]): Promise<AuthResult> {
    try {
      const { payload } = await jwtVerify(token, this.getKey, {
        issuer: this.issuer,
        audience,
        algorithms: this.config.algorithms,
        requiredClaims: ["exp"],
        clockTolerance: Math.floor(this.config.clockToleranceMs / 1000),
      });
      return this.accepted(payload, undefined);
    } catch (err) {
      if (cannotCheck(err)) return unavailable(err);
      return invalid(reason(err));
    }
  }

  private async verifyOpaque(introspector: Introspector, token: string, audience: string[]): Promise<AuthResult> {
    let answer: IntrospectionResponse;
    try {
      answer = await introspector.introspect(token);
    } catch (err) {
      return unavailable(err);
    }
    if (!answer.active) return invalid("the token is not active");
    const nowS = this.clock() / 1000;
    const toleranceS = this.config.clockToleranceMs / 1000;
    if (typeof answer.exp === "number" && answer.exp + toleranceS <= nowS) return invalid("the token has expired");
    if (typeof answer.nbf === "number" && answer.nbf - toleranceS > nowS) return invalid("the token's 'nbf' claim is not accepted");
    if (answer.iss !== undefined && answer.iss !== this.issuer) return invalid("the token's 'iss' claim is not accepted");
    const aud = typeof answer.aud === "string" ? [answer.aud] : (answer.aud ?? []);
    if (!aud.some((a) => audience.includes(a))) return invalid("the token's 'aud' claim is not accepted");
    // RFC 7662 §2.2: `sub` names the resource owner and may be absent for a client's own token
    // (client credentials); then the client is the owner.
    return this.accepted(answer, this.config.principalClaim === "sub" ? answer.client_id : undefined);
  }

  private accepted(claims: Record<string, unknown>, fallback: string | undefined): AuthResult {
    const claim = this.config.principalClaim;
    const name = typeof claims[claim] === "string" && claims[claim] !== "" ? (claims[claim] as string) : fallback;
    if (name === undefined) return invalid(`the token has no '${claim}' claim`);
    return { ok: true, principal: userPrincipal(name), scopes: grantedScopes(claims), audience: audienceOf(claims) };
  }

  /** The issuer's key set, created once from the configured URL or the metadata's jwks_uri. */
  private readonly getKey: JWTVerifyGetKey = async (header, token) => {
    this.remoteKeys ??= this.jwksUrl().then((url) =>
      createRemoteJWKSet(url, {
        cooldownDuration: this.config.jwksCooldownMs,
        cacheMaxAge: this.config.jwksMaxAgeMs,
        timeoutDuration: this.config.fetchTimeoutMs,
      }),
    );
    this.remoteKeys.catch(() => (this.remoteKeys = undefined));
    return (await this.remoteKeys)(header, token);
  };

  private async jwksUrl(): Promise<URL> {
    if (this.config.jwksUrl !== undefined) return new URL(this.config.jwksUrl);
    const { jwks_uri } = await this.metadata.get();
    if (jwks_uri === undefined) throw new Error("the issuer's metadata names no jwks_uri; set auth.oauth.jwksUrl");
    return new URL(jwks_uri);
  }
}

/** Three dot-separated parts with a JSON protected header; anything else is opaque. */
function isJwt(token: string): boolean {
  if (token.split(".").length !== 3) return false;
  try {
    decodeProtectedHeader(token);
    return true;
  } catch {
    return false;
  }
}

/** The keys could not be had (issuer down, timeout, bad JWKS document): not the token's fault. */
function cannotCheck(err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.constructor === errors.JOSEError;
}

function unavailable(err: unknown): AuthResult {
  // An OAuth error answer (oauth4webapi's ResponseBodyError) says why in `error`/`error_description`.
  const { error, error_description } = (err ?? {}) as { error?: unknown; error_description?: unknown };
  const oauthError = typeof error === "string" ? ` (${error}${typeof error_description === "string" ? `: ${error_description}` : ""})` : "";
  return { ok: false, error: "unavailable", description: `the token could not be checked: ${err instanceof Error ? err.message : String(err)}${oauthError}` };
}
