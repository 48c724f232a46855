import { request } from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modern } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";

const SECRET = "jwt-secret-for-the-test-of-32-characters-or-more";
const upstreams = [{ name: "demo", path: "/mcp", stdio: demoStdio() }];

const jwt = (claims: Record<string, unknown>, exp: number | string = "5m") =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime(exp).sign(new TextEncoder().encode(SECRET));

/** A POST with a Host header of our choosing (fetch sets its own). */
function postWithHost(url: string, host: string): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { host, "content-type": "application/json", accept: "application/json, text/event-stream" } },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text.startsWith("{") ? JSON.parse(text) : text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("auth modes jwt and header, and the Host check, on real gateways", () => {
  let jwtGw: GatewayProcess;
  let untrusted: GatewayProcess;
  let trusted: GatewayProcess;
  beforeAll(async () => {
    [jwtGw, untrusted, trusted] = await Promise.all([
      // The secret comes from the environment, as a deployment would pass it.
      startGateway(
        { auth: { mode: "jwt", jwt: { secret: "${TEST_JWT_SECRET}", audience: "taskgate", issuer: "https://id.example" } }, upstreams },
        { TEST_JWT_SECRET: SECRET },
      ),
      startGateway({ auth: { mode: "header", header: { name: "x-user", trustedProxies: ["10.20.30.40"] } }, upstreams }),
      startGateway({ auth: { mode: "header", header: { name: "x-user", trustedProxies: ["127.0.0.1", "::1"] } }, upstreams }),
    ]);
  });
  afterAll(async () => Promise.all([jwtGw?.stop(), untrusted?.stop(), trusted?.stop()]));

  const discover = (gw: GatewayProcess, headers: Record<string, string>) => modern(gw.mcpUrl, "server/discover", {}, { headers });

  it("jwt: accepts a valid token; rejects expired, wrong-audience and wrongly signed ones with 401", async () => {
    const good = { sub: "alice", aud: "taskgate", iss: "https://id.example" };
    expect((await discover(jwtGw, { authorization: `Bearer ${await jwt(good)}` })).status).toBe(200);
    const expired = await discover(jwtGw, { authorization: `Bearer ${await jwt(good, Math.floor(Date.now() / 1000) - 120)}` });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain('error_description="the token has expired"');
    const audience = await discover(jwtGw, { authorization: `Bearer ${await jwt({ ...good, aud: "other" })}` });
    expect(audience.status).toBe(401);
    expect(audience.headers.get("www-authenticate")).toContain("'aud' claim");
    const forged = await new SignJWT(good)
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(`x${SECRET}`));
    const wrong = await discover(jwtGw, { authorization: `Bearer ${forged}` });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    expect(jwtGw.output()).not.toContain(SECRET);
  });

  it("header: refuses the identity header from an address that is not a trusted proxy", async () => {
    const res = await discover(untrusted, { "x-user": "alice" });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain("trusted proxy");
  });

  it("header: takes the identity from a trusted proxy, and 401s when the proxy sends none", async () => {
    expect((await discover(trusted, { "x-user": "alice" })).status).toBe(200);
    expect((await discover(trusted, {})).status).toBe(401);
  });

  it("on loopback, answers a Host that is not a loopback name with 403 (DNS rebinding)", async () => {
    const port = new URL(trusted.mcpUrl).port;
    const rebound = await postWithHost(trusted.mcpUrl, `evil.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32600, message: expect.stringContaining("Host") } });
    // The Host check comes before authentication, so it answers 403 with or without credentials.
    expect((await postWithHost(trusted.mcpUrl, `localhost:${port}`)).status).toBe(401);
  });
});

describe("jwt mode names its audience", () => {
  const jwtAuth = (audience?: string) => ({ mode: "jwt", jwt: { secret: "${TEST_JWT_SECRET}", ...(audience ? { audience } : {}) } });

  it("refuses to start without auth.jwt.audience, saying how to accept any", async () => {
    await expect(startGateway({ auth: jwtAuth(), upstreams }, { TEST_JWT_SECRET: SECRET })).rejects.toThrow(
      /auth\.jwt\.audience: jwt mode needs the audience its tokens are minted for .*`audience: any`/,
    );
  });

  it("with audience: any, warns at start and accepts a token minted for another service", async () => {
    const gw = await startGateway({ auth: jwtAuth("any"), upstreams }, { TEST_JWT_SECRET: SECRET });
    try {
      expect(gw.output()).toMatch(/"level":"warn"[^\n]*auth\.jwt\.audience: any: tokens minted for any service are accepted/);
      const res = await modern(gw.mcpUrl, "server/discover", {}, { headers: { authorization: `Bearer ${await jwt({ sub: "alice", aud: "elsewhere" })}` } });
      expect(res.status).toBe(200);
    } finally {
      await gw.stop();
    }
  });
});
