import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { post } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

describe("a legacy session opened on one taskgate process is served by another on the same Redis", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    // Sessions cached far longer than the test's deadlines: only the "session ended" hint between
    // the processes can end a session on the other one in time.
    const config = { store, sessions: { cacheMs: 60_000 }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] };
    [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("continues the session on the second process, and a DELETE there ends it on the first", async () => {
    const first = await connectClient(a.mcpUrl);
    const sessionId = first.transport.sessionId!;
    expect(textOf(await first.client.callTool({ name: "echo", arguments: { text: "on a" } }))).toContain("on a");

    const second = await connectClient(b.mcpUrl, { sessionId });
    expect(textOf(await second.client.callTool({ name: "echo", arguments: { text: "on b" } }))).toContain("on b");

    const del = await fetch(b.mcpUrl, { method: "DELETE", headers: { "mcp-session-id": sessionId } });
    expect(del.status).toBe(200);
    // The first process has the session cached; the hint reaches it asynchronously, within moments.
    const listOnA = () => post(a.mcpUrl, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": sessionId });
    await waitFor(async () => (await listOnA()).status === 404, { timeoutMs: 5_000, what: "the ended session to be refused on the first process" });
    expect((await fetch(b.mcpUrl, { method: "DELETE", headers: { "mcp-session-id": sessionId } })).status).toBe(404);
  });
});
