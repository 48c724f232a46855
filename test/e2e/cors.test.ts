import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerAuth } from "../helpers/auth.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH, openSession, post } from "../helpers/raw.js";

const PING = { jsonrpc: "2.0", id: 1, method: "ping" };
const PREFLIGHT_HEADERS = "authorization,content-type,mcp-session-id,mcp-protocol-version,mcp-method,mcp-name,last-event-id,mcp-param-region";

function preflight(url: string, origin: string) {
  return fetch(url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": PREFLIGHT_HEADERS } });
}

function expectCors(res: Response, origin: string) {
  expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  expect(res.headers.get("vary")?.toLowerCase()).toContain("origin");
  const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
  for (const h of ["mcp-session-id", "www-authenticate", "mcp-protocol-version"]) expect(exposed).toContain(h);
}

describe("Origins and CORS on a loopback listener without http.allowedOrigins", () => {
  let gw: GatewayProcess;
  let session: string;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
    session = await openSession(gw.mcpUrl);
  });
  afterAll(async () => gw?.stop());

  it("lets pages from loopback origins call, any port, and says so in CORS headers", async () => {
    for (const origin of ["http://localhost:6274", "http://127.0.0.1:1", "https://[::1]:8443", "http://localhost", gw.url]) {
      const res = await post(gw.mcpUrl, PING, { "mcp-session-id": session, origin });
      expect(res.status, origin).toBe(200);
      expectCors(res, origin);
    }
  });

  it("refuses other origins with 403 naming http.allowedOrigins, preflight included", async () => {
    for (const origin of ["http://evil.example", "http://localhost.evil.example:6274", "null", "file://localhost", "http://127.0.0.2:80"]) {
      for (const res of [await post(gw.mcpUrl, PING, { "mcp-session-id": session, origin }), await preflight(gw.mcpUrl, origin)]) {
        expect(res.status, origin).toBe(403);
        expect(res.headers.get("access-control-allow-origin")).toBeNull();
        const body = (await res.json()) as any;
        expect(body.error).toMatchObject({ code: -32600, message: expect.stringContaining("http.allowedOrigins") });
      }
    }
  });

  it("answers a preflight from an allowed origin with the methods and the headers an MCP page sends", async () => {
    const res = await preflight(gw.mcpUrl, "http://localhost:6274");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(res.headers.get("access-control-allow-methods")).toMatch(/POST/);
    expect(res.headers.get("access-control-allow-methods")).toMatch(/DELETE/);
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toBe(PREFLIGHT_HEADERS);
  });

  it("puts the CORS headers on SSE responses and errors too", async () => {
    const origin = "http://localhost:6274";
    const controller = new AbortController();
    const stream = await fetch(gw.mcpUrl, { headers: { origin, accept: "text/event-stream", "mcp-session-id": session }, signal: controller.signal });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    expectCors(stream, origin);
    controller.abort();
    const streamed = await post(
      gw.mcpUrl,
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "sleep", arguments: { seconds: 0.2, progressIntervalMs: 50 }, _meta: { progressToken: "p" } },
      },
      { "mcp-session-id": session, origin, accept: "text/event-stream" },
    );
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expectCors(streamed, origin);
    await streamed.text();
    const notFound = await post(gw.mcpUrl, PING, { "mcp-session-id": "nope", origin });
    expect(notFound.status).toBe(404);
    expectCors(notFound, origin);
  });

  it("keeps non-browser clients (no Origin) free of CORS headers", async () => {
    const res = await post(gw.mcpUrl, PING, { "mcp-session-id": session });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("Origins and CORS with http.allowedOrigins", () => {
  let listed: GatewayProcess;
  let any: GatewayProcess;
  beforeAll(async () => {
    [listed, any] = await Promise.all([
      startGateway({
        http: { allowedOrigins: ["https://app.example"] },
        auth: bearerAuth("alice"),
        upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
      }),
      startGateway({ http: { allowedOrigins: ["*"] }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([listed?.stop(), any?.stop()]);
  });

  it("lets only the listed origins in: the list replaces the loopback default", async () => {
    const pre = await preflight(listed.mcpUrl, "https://app.example");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const refused = await preflight(listed.mcpUrl, "http://localhost:6274");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.message).toContain("is not in http.allowedOrigins");
  });

  it("lets the page read the auth challenge of a 401", async () => {
    const res = await fetch(listed.mcpUrl, {
      method: "POST",
      headers: { origin: "https://app.example", "content-type": "application/json", accept: ACCEPT_BOTH },
      body: JSON.stringify(PING),
    });
    expect(res.status).toBe(401);
    expectCors(res, "https://app.example");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it('with "*" echoes whatever origin calls', async () => {
    for (const origin of ["https://anything.example", "http://localhost:3000"]) {
      const res = await preflight(any.mcpUrl, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    }
  });
});
