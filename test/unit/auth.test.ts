import { createHash } from "node:crypto";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createAuthenticator } from "../../src/auth/index.js";
import type { AuthRequest } from "../../src/auth/types.js";
import { AuthSchema, type AuthConfig } from "../../src/config/security-schema.js";
import { challenge } from "../../src/http/auth-guard.js";

const SECRET = "a-shared-secret-of-at-least-32-characters";
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const config = (input: Record<string, unknown>): AuthConfig => AuthSchema.parse(input);
const request = (headers: Record<string, string>, remoteAddress = "127.0.0.1"): AuthRequest => ({
  header: (name) => headers[name.toLowerCase()],
  remoteAddress: () => remoteAddress,
});
const bearer = (token: string) => request({ authorization: `Bearer ${token}` });

async function hs256(claims: Record<string, unknown>, opts: { secret?: string; expiresIn?: string | number; notBefore?: string | number } = {}) {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt();
  if (opts.expiresIn !== undefined) jwt = jwt.setExpirationTime(opts.expiresIn);
  if (opts.notBefore !== undefined) jwt = jwt.setNotBefore(opts.notBefore);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? SECRET));
}

describe("bearer mode", () => {
  const auth = createAuthenticator(config({ mode: "bearer", bearer: { tokens: [{ sha256: sha256("tok-alice"), principal: "alice" }] } }));

  it("maps a known token to its principal, from its SHA-256 only", async () => {
    expect(await (await auth).authenticate(bearer("tok-alice"))).toEqual({ ok: true, principal: "user:alice" });
  });

  it("refuses a missing, unknown or malformed credential", async () => {
    const a = await auth;
    expect(await a.authenticate(request({}))).toMatchObject({ ok: false, error: "invalid_request" });
    expect(await a.authenticate(bearer("tok-mallory"))).toMatchObject({ ok: false, error: "invalid_token" });
    expect(await a.authenticate(request({ authorization: "Basic YWxpY2U6eA==" }))).toMatchObject({ ok: false, error: "invalid_request" });
    expect(await a.authenticate(bearer(sha256("tok-alice")))).toMatchObject({ ok: false, error: "invalid_token" });
  });
});

describe("jwt mode", () => {
  const hsConfig = config({ mode: "jwt", jwt: { secret: SECRET, issuer: "https://issuer.example", audience: "taskgate" } });
  const good = { iss: "https://issuer.example", aud: "taskgate", sub: "alice" };

  it("accepts a valid HS256 token and names the principal from `sub`", async () => {
    const auth = await createAuthenticator(hsConfig);
    expect(await auth.authenticate(bearer(await hs256(good, { expiresIn: "5m" })))).toEqual({
      ok: true,
      principal: "user:alice",
      scopes: new Set(),
      audience: ["taskgate"],
    });
  });

  it("reads the granted scopes from `scope` (space-separated) and `scp` (string or array)", async () => {
    const auth = await createAuthenticator(hsConfig);
    const both = await auth.authenticate(bearer(await hs256({ ...good, scope: "mcp  deploy", scp: ["tasks.cancel", 7] }, { expiresIn: "5m" })));
    expect(both).toEqual({ ok: true, principal: "user:alice", scopes: new Set(["mcp", "deploy", "tasks.cancel"]), audience: ["taskgate"] });
  });

  it("rejects an expired token, a wrong audience or issuer, a wrong signature, a future nbf and a token without exp", async () => {
    const auth = await createAuthenticator(hsConfig);
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ["expired", hs256(good, { expiresIn: Math.floor(Date.now() / 1000) - 60 }), /expired/],
      ["wrong audience", hs256({ ...good, aud: "someone-else" }, { expiresIn: "5m" }), /'aud'/],
      ["wrong issuer", hs256({ ...good, iss: "https://evil.example" }, { expiresIn: "5m" }), /'iss'/],
      ["wrongly signed", hs256(good, { expiresIn: "5m", secret: "another-secret-of-at-least-32-characters" }), /signature/],
      ["not yet valid", hs256(good, { expiresIn: "1h", notBefore: "10m" }), /'nbf'/],
      ["no exp", hs256(good), /'exp'/],
    ];
    for (const [what, token, reason] of cases) {
      const result = await auth.authenticate(bearer(await token));
      expect(result, what).toMatchObject({ ok: false, error: "invalid_token", description: expect.stringMatching(reason) });
    }
  });

  it("takes one audience or a list, and `any` only when said so", async () => {
    expect(AuthSchema.safeParse({ mode: "jwt", jwt: { secret: SECRET } }).error?.issues[0]).toMatchObject({
      path: ["jwt", "audience"],
      message: expect.stringContaining("audience: any"),
    });
    const listed = await createAuthenticator(config({ mode: "jwt", jwt: { secret: SECRET, audience: ["taskgate", "https://api.example/mcp"] } }));
    const either = await hs256({ sub: "alice", aud: ["https://api.example/mcp", "x"] }, { expiresIn: "5m" });
    expect(await listed.authenticate(bearer(either))).toMatchObject({ ok: true, audience: ["https://api.example/mcp", "x"] });
    expect(await listed.authenticate(bearer(await hs256({ sub: "alice", aud: "x" }, { expiresIn: "5m" })))).toMatchObject({ ok: false });
    const any = await createAuthenticator(config({ mode: "jwt", jwt: { secret: SECRET, audience: "any" } }));
    expect(await any.authenticate(bearer(await hs256({ sub: "alice", aud: "x" }, { expiresIn: "5m" })))).toMatchObject({ ok: true, audience: ["x"] });
  });

  it("rejects an HS256 token where RS256 is expected (no algorithm confusion)", async () => {
    const { publicKey } = await generateKeyPair("RS256");
    const auth = await createAuthenticator(config({ mode: "jwt", jwt: { publicKey: await exportSPKI(publicKey), audience: "any" } }));
    expect(await auth.authenticate(bearer(await hs256(good, { expiresIn: "5m" })))).toMatchObject({ ok: false, error: "invalid_token" });
  });

  it("verifies RS256 with a PEM public key and ES256 with a JWKS, with a configured claim", async () => {
    const rs = await generateKeyPair("RS256");
    const rsAuth = await createAuthenticator(
      config({ mode: "jwt", jwt: { publicKey: await exportSPKI(rs.publicKey), principalClaim: "email", audience: "any" } }),
    );
    const rsToken = await new SignJWT({ email: "bob@example.com" }).setProtectedHeader({ alg: "RS256" }).setExpirationTime("5m").sign(rs.privateKey);
    expect(await rsAuth.authenticate(bearer(rsToken))).toEqual({ ok: true, principal: "user:bob@example.com", scopes: new Set(), audience: [] });

    const es = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(es.publicKey)), kid: "k1", alg: "ES256" };
    const esAuth = await createAuthenticator(config({ mode: "jwt", jwt: { jwks: { keys: [jwk] }, audience: "any" } }));
    const esToken = await new SignJWT({ sub: "carol" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("5m").sign(es.privateKey);
    expect(await esAuth.authenticate(bearer(esToken))).toEqual({ ok: true, principal: "user:carol", scopes: new Set(), audience: [] });
    const other = await generateKeyPair("ES256");
    const forged = await new SignJWT({ sub: "carol" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("5m").sign(other.privateKey);
    expect(await esAuth.authenticate(bearer(forged))).toMatchObject({ ok: false, error: "invalid_token" });
  });
});

describe("header mode", () => {
  const auth = createAuthenticator(config({ mode: "header", header: { name: "x-user", trustedProxies: ["10.0.0.5", "::1"] } }));

  it("takes the principal from the header when the request comes from a trusted proxy", async () => {
    const a = await auth;
    expect(await a.authenticate(request({ "x-user": "alice" }, "10.0.0.5"))).toEqual({ ok: true, principal: "user:alice" });
    expect(await a.authenticate(request({ "x-user": "alice" }, "::ffff:10.0.0.5"))).toEqual({ ok: true, principal: "user:alice" });
    expect(await a.authenticate(request({ "x-user": "alice" }, "::1"))).toEqual({ ok: true, principal: "user:alice" });
  });

  it("rejects the header from an untrusted address, and a missing or malformed header", async () => {
    const a = await auth;
    expect(await a.authenticate(request({ "x-user": "alice" }, "127.0.0.1"))).toMatchObject({ ok: false });
    expect(await a.authenticate(request({ "x-user": "alice" }, undefined as unknown as string))).toMatchObject({ ok: false });
    expect(await a.authenticate(request({}, "10.0.0.5"))).toMatchObject({ ok: false });
    expect(await a.authenticate(request({ "x-user": "al\u0000ice" }, "10.0.0.5"))).toMatchObject({ ok: false });
  });
});

describe("header mode with CIDR ranges", () => {
  it("trusts every address of a configured range, IPv4 and IPv6, and nothing outside it", async () => {
    const auth = await createAuthenticator(config({ mode: "header", header: { trustedProxies: ["10.0.0.0/8", "fd00::/8", "::ffff:192.168.1.1"] } }));
    const from = (address: string) => auth.authenticate(request({ "x-forwarded-user": "alice" }, address));
    for (const inside of ["10.1.2.3", "::ffff:10.200.0.1", "fd12::1", "192.168.1.1"]) expect(await from(inside), inside).toMatchObject({ ok: true });
    for (const outside of ["11.0.0.1", "fe80::1", "192.168.1.2", "127.0.0.1", "not-an-ip"]) expect(await from(outside), outside).toMatchObject({ ok: false });
  });

  it("refuses entries that are neither an address nor a range", () => {
    for (const bad of ["10.0.0.0/33", "proxy.internal", "10.0.0.1/8/1", "::1/129", "10.0.0.0/x"])
      expect(AuthSchema.safeParse({ mode: "header", header: { trustedProxies: [bad] } }).success, bad).toBe(false);
  });
});

describe("the auth config", () => {
  it("needs what each mode needs", () => {
    expect(AuthSchema.safeParse({ mode: "bearer" }).success).toBe(false);
    expect(AuthSchema.safeParse({ mode: "header" }).success).toBe(false);
    expect(AuthSchema.safeParse({ mode: "jwt" }).success).toBe(false);
    expect(AuthSchema.safeParse({ mode: "jwt", jwt: { secret: SECRET, jwks: { keys: [] } } }).success).toBe(false);
    expect(AuthSchema.safeParse({ mode: "bearer", bearer: { tokens: [{ sha256: "not-a-hash", principal: "a" }] } }).success).toBe(false);
    expect(AuthSchema.parse({}).mode).toBe("none");
  });

  it("challenges per RFC 6750: no error code without credentials, the reason with bad ones", () => {
    expect(challenge("tg", { ok: false, error: "invalid_request", description: "credentials are required" })).toBe('Bearer realm="tg"');
    expect(challenge("tg", { ok: false, error: "invalid_token", description: 'the "token" has expired' })).toBe(
      'Bearer realm="tg", error="invalid_token", error_description="the token has expired"',
    );
  });
});
