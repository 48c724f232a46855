import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH, messagesOf, openSession, post } from "../helpers/raw.js";

describe("bad input gets a well-formed answer and taskgate keeps serving", () => {
  let gw: GatewayProcess;
  let session: string;
  beforeAll(async () => {
    gw = await startGateway({
      http: { maxBodyBytes: 64 * 1024, allowedOrigins: ["http://allowed.example"] },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
    });
    session = await openSession(gw.mcpUrl);
  });
  afterAll(async () => gw?.stop());

  async function stillServing() {
    const res = await post(gw.mcpUrl, { jsonrpc: "2.0", id: "ok", method: "ping" }, { "mcp-session-id": session });
    expect(res.status).toBe(200);
    expect((await messagesOf(res))[0]).toMatchObject({ id: "ok", result: {} });
  }

  async function expectError(res: Response, status: number, code: number) {
    expect(res.status).toBe(status);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", error: { code, message: expect.any(String) } });
    await stillServing();
    return body;
  }

  it("answers invalid JSON with -32700", async () => {
    await expectError(await post(gw.mcpUrl, "{not json", { "mcp-session-id": session }), 400, -32700);
  });

  it("answers a message that is not JSON-RPC with -32600", async () => {
    for (const body of [{ hello: 1 }, { jsonrpc: "1.0", id: 1, method: "ping" }, 42, "null", { jsonrpc: "2.0", id: {}, method: "x" }])
      await expectError(await post(gw.mcpUrl, body, { "mcp-session-id": session }), 400, -32600);
  });

  it("keeps the id of an invalid request that has a usable one", async () => {
    const body = await expectError(await post(gw.mcpUrl, { jsonrpc: "2.0", id: 7, method: 3 }, { "mcp-session-id": session }), 400, -32600);
    expect(body.id).toBe(7);
  });

  it("passes an unknown method to the upstream, which answers -32601", async () => {
    const res = await post(gw.mcpUrl, { jsonrpc: "2.0", id: 2, method: "no/such/method" }, { "mcp-session-id": session });
    expect(res.status).toBe(200);
    expect((await messagesOf(res))[0]).toMatchObject({ id: 2, error: { code: -32601 } });
    await stillServing();
  });

  it("answers 400 without a session id and 404 for an unknown or ended session", async () => {
    await expectError(await post(gw.mcpUrl, { jsonrpc: "2.0", id: 3, method: "tools/list" }), 400, -32600);
    await expectError(await post(gw.mcpUrl, { jsonrpc: "2.0", id: 3, method: "tools/list" }, { "mcp-session-id": "nope" }), 404, -32001);
    const ended = await openSession(gw.mcpUrl);
    const del = await fetch(gw.mcpUrl, { method: "DELETE", headers: { "mcp-session-id": ended } });
    expect(del.status).toBe(200);
    await expectError(await post(gw.mcpUrl, { jsonrpc: "2.0", id: 4, method: "tools/list" }, { "mcp-session-id": ended }), 404, -32001);
    expect((await fetch(gw.mcpUrl, { method: "DELETE", headers: { "mcp-session-id": ended } })).status).toBe(404);
  });

  it("answers a wrong Accept with 406", async () => {
    await expectError(await post(gw.mcpUrl, { jsonrpc: "2.0", id: 5, method: "ping" }, { "mcp-session-id": session, accept: "text/html" }), 406, -32600);
    const get = await fetch(gw.mcpUrl, { headers: { "mcp-session-id": session, accept: "application/json" } });
    await expectError(get, 406, -32600);
  });

  it("answers a body over the limit with 413", async () => {
    const huge = { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(100 * 1024) } } };
    await expectError(await post(gw.mcpUrl, huge, { "mcp-session-id": session }), 413, -32600);
  });

  it("counts a chunked body, which declares no length, against the limit too", async () => {
    const chunked = (message: unknown) =>
      fetch(gw.mcpUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-session-id": session },
        body: new Blob([JSON.stringify(message)]).stream(),
        duplex: "half",
      } as RequestInit);
    const huge = { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(100 * 1024) } } };
    await expectError(await chunked(huge), 413, -32600);
    const small = await chunked({ jsonrpc: "2.0", id: 11, method: "ping" });
    expect(small.status).toBe(200);
    expect((await messagesOf(small))[0]).toMatchObject({ id: 11, result: {} });
  });

  it("answers an Origin that is not allowed with 403, and lets an allowed one through", async () => {
    await expectError(
      await post(gw.mcpUrl, { jsonrpc: "2.0", id: 8, method: "ping" }, { "mcp-session-id": session, origin: "http://evil.example" }),
      403,
      -32600,
    );
    const ok = await post(gw.mcpUrl, { jsonrpc: "2.0", id: 9, method: "ping" }, { "mcp-session-id": session, origin: "http://allowed.example" });
    expect(ok.status).toBe(200);
  });

  it("answers a wrong Content-Type with 415 and another HTTP method with 405", async () => {
    await expectError(await post(gw.mcpUrl, "{}", { "mcp-session-id": session, "content-type": "text/plain" }), 415, -32600);
    await expectError(await fetch(gw.mcpUrl, { method: "PUT" }), 405, -32600);
  });

  it("answers an unsupported MCP-Protocol-Version header with 400", async () => {
    await expectError(
      await post(gw.mcpUrl, { jsonrpc: "2.0", id: 10, method: "ping" }, { "mcp-session-id": session, "mcp-protocol-version": "1999-01-01" }),
      400,
      -32600,
    );
  });

  it("refuses JSON-RPC batches with -32600", async () => {
    await expectError(await post(gw.mcpUrl, [{ jsonrpc: "2.0", id: 1, method: "ping" }], { "mcp-session-id": session }), 400, -32600);
  });

  it("refuses absurdly deep nesting first, with 400 and -32600 naming the field, on both wires", async () => {
    const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    // An initialize whose capabilities nest 10,000 levels deep.
    const init = `{"jsonrpc":"2.0","id":21,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"},"capabilities":${deep(10_000)}}}`;
    let body = await expectError(await post(gw.mcpUrl, init), 400, -32600);
    expect(body.id).toBe(21);
    expect(body.error.message).toMatch(/params\.capabilities\.a\.a.*nested deeper than 64 levels/);
    // In a session, and on the 2026-07-28 wire, whatever the method.
    const inSession = `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"echo","arguments":{"text":${deep(65)}}}}`;
    body = await expectError(await post(gw.mcpUrl, inSession, { "mcp-session-id": session }), 400, -32600);
    expect(body.error.message).toContain("params.arguments.text");
    const meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
    const modern = `{"jsonrpc":"2.0","id":23,"method":"tasks/get","params":{${meta},"taskId":${deep(5_000)}}}`;
    const headers = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tasks/get", "mcp-name": "x" };
    body = await expectError(await post(gw.mcpUrl, modern, headers), 400, -32600);
    expect(body).toMatchObject({ id: 23, error: { message: expect.stringContaining("params.taskId") } });
    // Deep but within the bound is served as usual.
    const fine = `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok","_x":${deep(40)}}}}`;
    expect((await messagesOf(await post(gw.mcpUrl, fine, { "mcp-session-id": session })))[0]).toMatchObject({ id: 24 });
  });
});
