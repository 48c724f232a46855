import { generateKeyPair, importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modern } from "../helpers/modern.js";
import { startAuthServer, type AuthServer, type TestClient } from "../helpers/oidc.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const agent: TestClient = { id: "agent", secret: "agent-secret-0123456789-0123456789", scope: "mcp deploy tasks.cancel" };
const gateway: TestClient = { id: "taskgate", secret: "taskgate-secret-0123456789-0123456789", scope: "" };
const WELL_KNOWN = "/.well-known/oauth-protected-resource";

describe("auth.mode oauth against a real authorization server (oidc-provider) on loopback", () => {
  let as: AuthServer;
  let gw: GatewayProcess;
  beforeAll(async () => {
    as = await startAuthServer([agent, gateway]);
    gw = await startGateway(
      {
        auth: {
          mode: "oauth",
          // A short cooldown so the test sees a rotated key soon; the default is 30 s.
          oauth: {
            issuer: as.issuer,
            clockToleranceMs: 0,
            jwksCooldownMs: 300,
            introspection: { clientId: gateway.id, clientSecret: "${TEST_INTROSPECTION_SECRET}" },
          },
        },
        upstreams: [
          { name: "demo", path: "/mcp", stdio: demoStdio(), scopes: { required: ["mcp"] }, tools: { deploy: { scopes: ["deploy"] } } },
          { name: "opaque", path: "/opaque", stdio: demoStdio() },
        ],
      },
      { TEST_INTROSPECTION_SECRET: gateway.secret },
    );
  });
  afterAll(async () => Promise.all([gw?.stop(), as?.close()]));

  const discover = (url: string, token?: string) =>
    modern(url, "server/discover", {}, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const opaqueUrl = () => `${gw.url}/opaque`;

  it("serves the protected resource metadata per path and at the root (RFC 9728)", async () => {
    const perPath = await (await fetch(`${gw.url}${WELL_KNOWN}/mcp`)).json();
    expect(perPath).toEqual({
      resource: gw.mcpUrl,
      authorization_servers: [as.issuer],
      scopes_supported: ["mcp", "deploy"],
      bearer_methods_supported: ["header"],
    });
    expect(await (await fetch(`${gw.url}${WELL_KNOWN}`)).json()).toEqual(perPath);
    const other = await (await fetch(`${gw.url}${WELL_KNOWN}/opaque`)).json();
    expect(other).toEqual({ resource: opaqueUrl(), authorization_servers: [as.issuer], bearer_methods_supported: ["header"] });
  });

  it("answers a request without a token with 401 naming the resource metadata and the scope", async () => {
    const res = await discover(gw.mcpUrl);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="taskgate", resource_metadata="${gw.url}${WELL_KNOWN}/mcp", scope="mcp"`);
  });

  it("accepts a client-credentials token issued for this resource", async () => {
    expect((await discover(gw.mcpUrl, await as.token(agent, gw.mcpUrl, "mcp"))).status).toBe(200);
  });

  it("refuses a token issued for another resource (RFC 8707), with the metadata in the challenge", async () => {
    const res = await discover(gw.mcpUrl, await as.token(agent, "http://127.0.0.1:1/other", "mcp"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(
      `error="invalid_token", error_description="the token's 'aud' claim is not accepted", resource_metadata="${gw.url}${WELL_KNOWN}/mcp"`,
    );
    // The /opaque endpoint is its own resource: a token for /mcp is not valid there.
    expect((await discover(opaqueUrl(), await as.token(agent, gw.mcpUrl, "mcp"))).status).toBe(401);
  });

  it("refuses an expired token and a wrongly signed one", async () => {
    const [current] = as.keys();
    const claims = { sub: "agent", scope: "mcp", aud: gw.mcpUrl, iss: as.issuer };
    const sign = async (key: Parameters<SignJWT["sign"]>[0], exp: number) =>
      new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: current!.kid!, typ: "at+jwt" }).setIssuedAt().setExpirationTime(exp).sign(key);
    const now = Math.floor(Date.now() / 1000);
    const expired = await discover(gw.mcpUrl, await sign(await importJWK(current!, "RS256"), now - 60));
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain("the token has expired");
    const stranger = await generateKeyPair("RS256");
    const forged = await discover(gw.mcpUrl, await sign(stranger.privateKey, now + 300));
    expect(forged.status).toBe(401);
    expect(forged.headers.get("www-authenticate")).toContain("signature does not verify");
  });

  it("accepts tokens signed with a rotated key without a restart, and the old ones still", async () => {
    const before = await as.token(agent, gw.mcpUrl, "mcp");
    expect((await discover(gw.mcpUrl, before)).status).toBe(200);
    await as.rotateKeys();
    const after = await as.token(agent, gw.mcpUrl, "mcp");
    // The new kid is unknown to the cached set: fetched again once the cooldown allows.
    await waitFor(async () => (await discover(gw.mcpUrl, after)).status === 200, { what: "the rotated key to be fetched" });
    expect((await discover(gw.mcpUrl, before)).status).toBe(200);
    expect(gw.proc.exitCode).toBeNull();
  });

  it("introspects an opaque token (RFC 7662) and binds it to its resource", async () => {
    const opaque = await as.token(agent, opaqueUrl(), "mcp");
    expect(opaque.split(".")).toHaveLength(1);
    expect((await discover(opaqueUrl(), opaque)).status).toBe(200);
    // Answered from the cache the second time; the result must be the same.
    expect((await discover(opaqueUrl(), opaque)).status).toBe(200);
    const elsewhere = await discover(gw.mcpUrl, opaque);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("www-authenticate")).toContain("'aud' claim");
    const unknown = await discover(opaqueUrl(), "not-a-token-the-server-issued");
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("www-authenticate")).toContain("the token is not active");
  });
});
