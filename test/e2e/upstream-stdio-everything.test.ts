import { afterEach, describe, expect, it } from "vitest";
import { UPSTREAM_PROTOCOL_VERSION } from "../../src/upstream/connector.js";
import { StdioConnector } from "../../src/upstream/stdio/stdio-connector.js";
import { EVERYTHING, groupAlive, stdioConfig, testLogger, textOf } from "../fixtures/upstreams.js";

describe("stdio connector against server-everything", () => {
  let connector: StdioConnector | undefined;
  afterEach(async () => {
    await connector?.close();
    connector = undefined;
  });

  async function started(): Promise<StdioConnector> {
    connector = new StdioConnector("everything", stdioConfig([EVERYTHING, "stdio"]), testLogger);
    await connector.start();
    return connector;
  }

  it("initializes once and caches the upstream's InitializeResult", async () => {
    const c = await started();
    expect(c.isReady()).toBe(true);
    expect(c.lastError()).toBeUndefined();
    const init = c.initializeResult();
    expect(init?.protocolVersion).toBe(UPSTREAM_PROTOCOL_VERSION);
    expect(init?.serverInfo.name).toBeTypeOf("string");
    expect(init?.capabilities).toHaveProperty("tools");
  });

  it("lists tools and calls echo", async () => {
    const c = await started();
    const list = await c.request({ method: "tools/list" });
    const names = ((list as unknown as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((t) => t.name);
    expect(names).toContain("echo");
    const ids: Array<string | number> = [];
    const echo = await c.request({ method: "tools/call", params: { name: "echo", arguments: { message: "hi" } }, onId: (id) => ids.push(id) });
    expect(textOf(echo)).toBe("Echo: hi");
    expect(echo.id).toBe(ids[0]);
  });

  it("gives each of many concurrent calls its own response", async () => {
    const c = await started();
    const messages = Array.from({ length: 60 }, (_, i) => `message ${i}`);
    const responses = await Promise.all(messages.map((message) => c.request({ method: "tools/call", params: { name: "echo", arguments: { message } } })));
    expect(responses.map(textOf)).toEqual(messages.map((m) => `Echo: ${m}`));
    expect(new Set(responses.map((r) => r.id)).size).toBe(messages.length);
  });

  it("relays a JSON-RPC error from the upstream as a normal response", async () => {
    const c = await started();
    const response = await c.request({ method: "no/such/method" });
    expect(response).toMatchObject({ error: { code: -32601 } });
  });

  it("leaves no process behind after close()", async () => {
    const c = await started();
    const pgid = c.pid();
    expect(pgid).toBeTypeOf("number");
    await c.close();
    expect(groupAlive(pgid!)).toBe(false);
    expect(c.isReady()).toBe(false);
    await expect(c.request({ method: "tools/list" })).rejects.toMatchObject({ name: "UpstreamError", reason: "closed" });
  });
});
