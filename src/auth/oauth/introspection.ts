import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import type { OAuthConfig } from "../../config/oauth-schema.js";
import { requestOptions, type IssuerMetadata } from "./issuer.js";

type IntrospectionConfig = NonNullable<OAuthConfig["introspection"]>;

/**
 * Token introspection (RFC 7662) for opaque access tokens, with answers reused for a bounded time
 * (`cacheMs`, never past the token's `exp`) and a bounded number of entries, oldest dropped first.
 * Cached by the token's SHA-256, so the cache holds no usable token.
 */
export class Introspector {
  private readonly cache = new Map<string, { untilMs: number; answer: oauth.IntrospectionResponse }>();
  private readonly client: oauth.Client;
  private readonly clientAuth: oauth.ClientAuth;

  constructor(
    private readonly config: IntrospectionConfig,
    private readonly issuer: string,
    private readonly metadata: IssuerMetadata,
    private readonly timeoutMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.client = { client_id: config.clientId };
    this.clientAuth = oauth.ClientSecretBasic(config.clientSecret);
  }

  async introspect(token: string): Promise<oauth.IntrospectionResponse> {
    const key = createHash("sha256").update(token).digest("hex");
    const now = this.clock();
    const hit = this.cache.get(key);
    if (hit && hit.untilMs > now) return hit.answer;
    this.cache.delete(key);
    const as = await this.server();
    const url = new URL(as.introspection_endpoint!);
    const response = await oauth.introspectionRequest(as, this.client, this.clientAuth, token, requestOptions(url, this.timeoutMs));
    const answer = await oauth.processIntrospectionResponse(as, this.client, response);
    this.remember(key, answer, now);
    return answer;
  }

  private remember(key: string, answer: oauth.IntrospectionResponse, now: number): void {
    if (this.config.cacheMs === 0) return;
    const expMs = typeof answer.exp === "number" ? answer.exp * 1000 : Infinity;
    const untilMs = Math.min(now + this.config.cacheMs, expMs);
    if (untilMs <= now) return;
    while (this.cache.size >= this.config.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { untilMs, answer });
  }

  /** The configured endpoint, else the one the issuer's metadata names. */
  private async server(): Promise<oauth.AuthorizationServer> {
    if (this.config.url !== undefined) return { issuer: this.issuer, introspection_endpoint: this.config.url };
    const as = await this.metadata.get();
    if (as.introspection_endpoint === undefined) throw new Error("the issuer's metadata names no introspection_endpoint; set auth.oauth.introspection.url");
    return as;
  }
}
