import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { messagesOf } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

const LEGACY = "2025-11-25";

describe("bad input gets a well-formed JSON-RPC error and the gateway keeps serving (in process)", () => {
  let gw: InProcessGateway;
  let session: string;
  const inSession = () => ({ "mcp-session-id": session, "mcp-protocol-version": LEGACY });
  beforeAll(async () => {
    gw = await inProcessGateway({ http: { maxBodyBytes: 4 * 1024, maxJsonDepth: 8 } });
    session = await gw.openSession();
  });
  afterAll(async () => gw?.close());

  async function expectError(res: Response, status: number, code: number) {
    expect(res.status).toBe(status);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", error: { code, message: expect.any(String) } });
    const ping = await gw.post({ jsonrpc: "2.0", id: "ok", method: "ping" }, inSession());
    expect((await messagesOf(ping))[0]).toMatchObject({ id: "ok", result: {} });
    return body;
  }

  it("answers invalid JSON with 400 and -32700", async () => {
    await expectError(await gw.post("{not json", inSession()), 400, -32700);
  });

  it("answers what is not a JSON-RPC message with 400 and -32600, keeping a usable id", async () => {
    for (const body of [{ hello: 1 }, { jsonrpc: "1.0", id: 1, method: "ping" }, 42, "null", { jsonrpc: "2.0", id: {}, method: "x" }])
      await expectError(await gw.post(body, inSession()), 400, -32600);
    expect((await expectError(await gw.post({ jsonrpc: "2.0", id: 7, method: 3 }, inSession()), 400, -32600)).id).toBe(7);
  });

  it("refuses a batch, a body nested too deep and one over the size limit", async () => {
    await expectError(await gw.post([{ jsonrpc: "2.0", id: 1, method: "ping" }], inSession()), 400, -32600);
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { a: deep };
    await expectError(await gw.post({ jsonrpc: "2.0", id: 2, method: "ping", params: { deep } }, inSession()), 400, -32600);
    await expectError(await gw.post({ jsonrpc: "2.0", id: 3, method: "ping", params: { pad: "x".repeat(8 * 1024) } }, inSession()), 413, -32600);
  });

  it("refuses a wrong Content-Type (415), an Accept it cannot serve (406) and a method it has no route for (405)", async () => {
    await expectError(await gw.post({ jsonrpc: "2.0", id: 1, method: "ping" }, { ...inSession(), "content-type": "text/plain" }), 415, -32600);
    await expectError(await gw.post({ jsonrpc: "2.0", id: 1, method: "ping" }, { ...inSession(), accept: "text/html" }), 406, -32600);
    const put = await gw.request("/mcp", { method: "PUT", headers: inSession() });
    expect(put.headers.get("allow")).toBe("GET, POST, DELETE");
    await expectError(put, 405, -32600);
  });

  it("answers 400 without a session id, 404 for an unknown or ended one", async () => {
    await expectError(await gw.post({ jsonrpc: "2.0", id: 3, method: "tools/list" }), 400, -32600);
    await expectError(await gw.post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { "mcp-session-id": "nope" }), 404, -32001);
    const ended = await gw.openSession();
    expect((await gw.request("/mcp", { method: "DELETE", headers: { "mcp-session-id": ended } })).status).toBe(200);
    await expectError(await gw.post({ jsonrpc: "2.0", id: 4, method: "tools/list" }, { "mcp-session-id": ended }), 404, -32001);
    expect((await gw.request("/mcp", { method: "DELETE", headers: { "mcp-session-id": ended } })).status).toBe(404);
  });

  it("relays the upstream's own -32601 for a method it does not know, and its -32602 for bad arguments", async () => {
    const unknown = await gw.post({ jsonrpc: "2.0", id: 5, method: "no/such/method" }, inSession());
    expect(unknown.status).toBe(200);
    expect((await messagesOf(unknown))[0]).toMatchObject({ id: 5, error: { code: -32601 } });
    const bad = await gw.post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "sleep", arguments: { seconds: "soon" } } }, inSession());
    expect((await messagesOf(bad))[0]).toMatchObject({ id: 6, error: { code: -32602, message: expect.stringContaining("seconds") } });
  });

  it("refuses a request id already in flight on the same session", async () => {
    const first = gw.post({ jsonrpc: "2.0", id: "dup", method: "tools/call", params: { name: "hang", arguments: {} } }, inSession());
    const log = gw.upstreams.get("demo")!.log;
    await waitFor(() => log.includes("hang started"), { what: "the demo server to start hang" });
    const second = await gw.post({ jsonrpc: "2.0", id: "dup", method: "tools/call", params: { name: "echo", arguments: { text: "x" } } }, inSession());
    expect((await messagesOf(second))[0]).toMatchObject({ id: "dup", error: { code: -32600, message: expect.stringContaining("already in flight") } });
    await gw.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "dup" } }, inSession());
    await waitFor(() => log.includes("hang cancelled"), { what: "the upstream to stop hang" });
    expect((await first).status).toBe(200);
  });
});
