import * as oauth from "oauth4webapi";

/**
 * The authorization server's metadata (RFC 8414, else OpenID Connect Discovery 1.0), read on
 * first need rather than at start, so taskgate starts while the identity provider is still down.
 * A failed read is retried by a later request, at most once per `retryMs`; a good one is kept.
 */
export class IssuerMetadata {
  private pending: Promise<oauth.AuthorizationServer> | undefined;
  private lastFailure: { at: number; error: Error } | undefined;

  constructor(
    private readonly issuer: URL,
    private readonly timeoutMs: number,
    private readonly retryMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get(): Promise<oauth.AuthorizationServer> {
    const failure = this.lastFailure;
    if (this.pending === undefined && failure && this.clock() - failure.at < this.retryMs) return Promise.reject(failure.error);
    this.pending ??= this.read().catch((err: unknown) => {
      this.pending = undefined;
      this.lastFailure = { at: this.clock(), error: err instanceof Error ? err : new Error(String(err)) };
      throw this.lastFailure.error;
    });
    return this.pending;
  }

  /** RFC 8414 first (the MCP authorization spec's order), then OpenID discovery. */
  private async read(): Promise<oauth.AuthorizationServer> {
    let first: unknown;
    for (const algorithm of ["oauth2", "oidc"] as const) {
      try {
        const response = await oauth.discoveryRequest(this.issuer, { algorithm, ...requestOptions(this.issuer, this.timeoutMs) });
        // Checks that the document names exactly our issuer (RFC 8414 §3.3).
        return await oauth.processDiscoveryResponse(this.issuer, response);
      } catch (err) {
        first ??= err;
      }
    }
    throw new Error(`cannot read the metadata of issuer ${this.issuer.href}: ${(first as Error).message}`);
  }
}

/** Timeout on every request; plain http only where the operator configured an http URL. */
export function requestOptions(url: URL, timeoutMs: number) {
  return { signal: () => AbortSignal.timeout(timeoutMs), ...(url.protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {}) };
}
