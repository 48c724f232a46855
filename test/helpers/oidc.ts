import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider, { type Configuration } from "oidc-provider";
import { freePort } from "./ports.js";

/** Scopes the test authorization server knows; each client is allowed a subset. */
export const AS_SCOPES = ["mcp", "deploy", "tasks.cancel"];

export interface TestClient {
  id: string;
  secret: string;
  /** The scopes it may be granted, space-separated; empty: none (a client that only introspects). */
  scope: string;
}

export interface AuthServer {
  issuer: string;
  /** The private keys it signs with, newest first (a test forges an expired token with them). */
  keys(): JWK[];
  /** A new signing key first; the old ones stay published until the next rotation drops the oldest. */
  rotateKeys(): Promise<void>;
  /** A client-credentials access token for `resource` (RFC 8707). */
  token(client: TestClient, resource: string, scope: string): Promise<string>;
  /** How many requests reached `path` (e.g. "/jwks", "/token/introspection") so far. */
  requests(path: string): number;
  close(): Promise<void>;
}

/**
 * A real OAuth 2.1 authorization server (oidc-provider) on a free loopback port: client
 * credentials, resource indicators (a resource whose path ends in /opaque gets opaque tokens,
 * any other a JWT bound to it), introspection. Keys rotate by building the provider anew with
 * the new key set behind the same listener, as a real identity provider rolls its keys.
 */
export async function startAuthServer(clients: TestClient[]): Promise<AuthServer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  let keys = [await signingKey("key-1")];
  // One store for every build, so opaque tokens issued before a rotation can still be introspected.
  const adapter = sharedAdapter();
  const build = () => new Provider(issuer, { ...providerConfig(keys, clients), adapter });
  let handler = build().callback();
  const counts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    return handler(req, res);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
  return {
    issuer,
    keys: () => keys,
    async rotateKeys() {
      keys = [await signingKey(`key-${keys.length + 1}`), ...keys].slice(0, 2);
      handler = build().callback();
    },
    async token(client, resource, scope) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (!res.ok || !body.access_token) throw new Error(`token request answered ${res.status}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    requests: (path) => counts.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
}

function providerConfig(keys: JWK[], clients: TestClient[]): Configuration {
  return {
    clients: clients.map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      ...(c.scope ? { scope: c.scope } : {}),
      token_endpoint_auth_method: "client_secret_basic",
    })),
    jwks: { keys: keys as NonNullable<Configuration["jwks"]>["keys"] },
    scopes: AS_SCOPES,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: AS_SCOPES.join(" "),
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: resource.endsWith("/opaque") ? "opaque" : "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  };
}

/** oidc-provider's storage contract, in memory, shared by every Provider built by one server. */
function sharedAdapter() {
  const store = new Map<string, Record<string, unknown>>();
  return class SharedAdapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>) {
      store.set(this.key(id), payload);
    }
    async find(id: string) {
      return store.get(this.key(id));
    }
    async findByUid() {
      return undefined;
    }
    async findByUserCode() {
      return undefined;
    }
    async consume(id: string) {
      const found = store.get(this.key(id));
      if (found) found["consumed"] = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, value] of store) if (value["grantId"] === grantId) store.delete(key);
    }
  };
}
