import type { Hono } from "hono";

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for each MCP endpoint, so that a client finds
 * the authorization server by itself (MCP authorization, Authorization Server Discovery:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-discovery).
 * Each endpoint is its own resource: `publicUrl` + its path, the value tokens are bound to (RFC 8707).
 */

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

export interface ResourceOptions {
  /** The base URL clients reach taskgate at; read per request, since the listener's port is known only once bound. */
  publicUrl: () => string;
  authorizationServers: readonly string[];
  /** The scopes_supported of one endpoint, by path. */
  scopesSupported: (path: string) => readonly string[];
}

/** What the 401 and 403 challenges name for one endpoint. */
export interface ResourceChallenge {
  metadataUrl(): string;
  resource(): string;
}

export class ProtectedResources {
  constructor(private readonly options: ResourceOptions) {}

  /** The canonical URL of the endpoint at `path` (no trailing slash, no fragment). */
  resource(path: string): string {
    return `${this.base().href.replace(/\/$/, "")}${path}`;
  }

  /** RFC 9728 §3.1: the well-known suffix goes between the host and the resource's path. */
  metadataUrl(path: string): string {
    const base = this.base();
    return `${base.origin}${WELL_KNOWN}${prefixOf(base)}${path}`;
  }

  challengeFor(path: string): ResourceChallenge {
    return { metadataUrl: () => this.metadataUrl(path), resource: () => this.resource(path) };
  }

  metadata(path: string) {
    const scopes = this.options.scopesSupported(path);
    return {
      resource: this.resource(path),
      authorization_servers: this.options.authorizationServers,
      ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
      // RFC 6750 §2.1 only: a token in a query string or form body ends up in logs.
      bearer_methods_supported: ["header"],
    };
  }

  /**
   * The per-path documents, under the public URL's path prefix too (a proxy may or may not strip
   * it), and the root document: the first endpoint's, for clients that try the root form
   * (MCP authorization, Protected Resource Metadata Discovery Requirements).
   */
  // biome-ignore lint/suspicious/noExplicitAny: mounts on any app, whatever its context variables; it reads none of them.
  mount(app: Hono<any>, paths: readonly string[]): void {
    const serve = (route: string, path: string) => {
      app.get(route, (c) => c.json(this.metadata(path), 200, CORS));
      app.options(
        route,
        () => new Response(null, { status: 204, headers: { ...CORS, "access-control-allow-methods": "GET", "access-control-allow-headers": "*" } }),
      );
    };
    // Before the listener is bound the URL may be unknown; only a configured one has a prefix.
    const known = this.options.publicUrl();
    const prefix = known === "" ? "" : prefixOf(new URL(known));
    for (const path of paths) {
      serve(`${WELL_KNOWN}${path}`, path);
      if (prefix !== "") serve(`${WELL_KNOWN}${prefix}${path}`, path);
    }
    if (paths[0] !== undefined) serve(WELL_KNOWN, paths[0]);
  }

  private base(): URL {
    return new URL(this.options.publicUrl());
  }
}

/** Browser-based clients read the metadata from another origin; it holds nothing secret. */
const CORS = { "access-control-allow-origin": "*" };

function prefixOf(base: URL): string {
  return base.pathname.replace(/\/$/, "");
}
