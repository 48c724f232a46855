import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";

/**
 * The MCP conformance suite's client scenario `request-metadata`, replayed: against a 2026-07-28-only
 * HTTP upstream with `generation: auto` (the default), every POST taskgate sends carries the
 * 2026-07-28 `MCP-Protocol-Version` header and the `_meta` envelope, from the first one on
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#backward-compatibility:
 * a client that speaks both eras attempts a modern request first).
 */
describe("first contact with a 2026-07-28-only HTTP upstream", () => {
  let upstream: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let gw: GatewayProcess;

  beforeAll(async () => {
    upstream = await startDemoHttp(["--modern"]);
    proxy = await startRecordingProxy(upstream.mcpUrl);
    gw = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", http: { url: proxy.mcpUrl } }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await upstream?.stop();
  });

  it("sends the 2026-07-28 header and _meta on every request, the first one included", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    await client.listTools();
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "first contact" } }))).toBe("first contact");
    await client.close();

    const posts = proxy.seen.filter((r) => r.httpMethod === "POST");
    expect(posts[0]?.method).toBe("server/discover");
    expect(posts.map((r) => r.method)).toEqual(expect.arrayContaining(["tools/list", "tools/call"]));
    expect(posts.map((r) => r.method)).not.toContain("initialize");
    for (const post of posts) {
      expect(post.protocolVersion, `${post.method}: MCP-Protocol-Version`).toBe("2026-07-28");
      expect(post.meta, `${post.method}: _meta`).toMatchObject({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": expect.any(Object),
        "io.modelcontextprotocol/clientInfo": { name: "taskgate" },
      });
    }
  });
});
