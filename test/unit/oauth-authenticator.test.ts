import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthRequest } from "../../src/auth/index.js";
import { OAuthAuthenticator } from "../../src/auth/oauth/oauth.js";
import { AuthSchema } from "../../src/config/security-schema.js";
import { startAuthServer, type AuthServer, type TestClient } from "../helpers/oidc.js";
import { waitFor } from "../helpers/wait-for.js";

const agent: TestClient = { id: "agent", secret: "agent-secret-0123456789-0123456789", scope: "mcp" };
const introspecting: TestClient = { id: "taskgate", secret: "taskgate-secret-0123456789-0123456789", scope: "" };
const RESOURCE = "http://127.0.0.1:1/mcp";
const OPAQUE = "http://127.0.0.1:1/opaque";

/** The authenticator in process, against the real authorization server on loopback. */
describe("the oauth authenticator's key and introspection caches", () => {
  let as: AuthServer;
  beforeAll(async () => {
    as = await startAuthServer([agent, introspecting]);
  });
  afterAll(async () => as?.close());

  const authenticator = (oauth: Record<string, unknown>) =>
    new OAuthAuthenticator(AuthSchema.parse({ mode: "oauth", oauth: { issuer: as.issuer, ...oauth } }).oauth);
  const request = (token: string, resource: string): AuthRequest => ({
    header: (n) => (n === "authorization" ? `Bearer ${token}` : undefined),
    remoteAddress: () => undefined,
    resource,
  });

  it("fetches the key set again for an unknown kid at most once per cooldown, and again once it is older than jwksMaxAgeMs", async () => {
    const limited = authenticator({ jwksCooldownMs: 3_600_000 });
    const aging = authenticator({ jwksCooldownMs: 3_600_000, jwksMaxAgeMs: 200 });
    const before = await as.token(agent, RESOURCE, "mcp");
    expect(await limited.authenticate(request(before, RESOURCE))).toMatchObject({ ok: true, principal: "user:agent", scopes: new Set(["mcp"]) });
    expect(await aging.authenticate(request(before, RESOURCE))).toMatchObject({ ok: true });
    await as.rotateKeys();
    const after = await as.token(agent, RESOURCE, "mcp");
    const fetches = as.requests("/jwks");
    // Within the cooldown an unknown kid fetches nothing: a stream of made-up kids costs the provider nothing.
    expect(await limited.authenticate(request(after, RESOURCE))).toMatchObject({ ok: false, error: "invalid_token", description: "no key matches the token" });
    expect(as.requests("/jwks")).toBe(fetches);
    // The set older than its maximum age is fetched again, and the new key is found.
    await waitFor(async () => (await aging.authenticate(request(after, RESOURCE))).ok, { what: "the aged key set to be fetched again" });
    expect(as.requests("/jwks")).toBeGreaterThan(fetches);
  });

  it("reuses an introspection answer for cacheMs, and asks every time with cacheMs 0", async () => {
    const introspection = { clientId: introspecting.id, clientSecret: introspecting.secret };
    const cached = authenticator({ introspection });
    const uncached = authenticator({ introspection: { ...introspection, cacheMs: 0 } });
    const token = await as.token(agent, OPAQUE, "mcp");
    const start = as.requests("/token/introspection");
    for (let i = 0; i < 3; i++)
      expect(await cached.authenticate(request(token, OPAQUE))).toMatchObject({ ok: true, principal: "user:agent", scopes: new Set(["mcp"]) });
    expect(as.requests("/token/introspection")).toBe(start + 1);
    for (let i = 0; i < 2; i++) expect(await uncached.authenticate(request(token, OPAQUE))).toMatchObject({ ok: true });
    expect(as.requests("/token/introspection")).toBe(start + 3);
  });

  it("answers 'unavailable', not 'invalid', when the issuer cannot be reached", async () => {
    const down = new OAuthAuthenticator(AuthSchema.parse({ mode: "oauth", oauth: { issuer: "http://127.0.0.1:1", fetchTimeoutMs: 2_000 } }).oauth);
    const token = await as.token(agent, RESOURCE, "mcp");
    expect(await down.authenticate(request(token, RESOURCE))).toMatchObject({ ok: false, error: "unavailable" });
  });
});
