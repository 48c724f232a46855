import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";

describe("taskgate in front of the demo server over Streamable HTTP", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let gw: GatewayProcess;
  beforeAll(async () => {
    demo = await startDemoHttp();
    gw = await startGateway({ upstreams: [{ name: "demo-http", path: "/mcp", http: { url: demo.mcpUrl } }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await demo?.stop();
  });

  it("lists and calls tools", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "over http" } }))).toContain("over http");
    await client.close();
  });

  it("relays progress and an elicitation from the call's own upstream stream", async () => {
    const seen: number[] = [];
    const { client } = await connectClient(gw.mcpUrl, { elicit: () => ({ action: "accept", content: { confirm: true } }) });
    const slept = await client.callTool({ name: "sleep", arguments: { seconds: 0.5, progressIntervalMs: 100 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(slept)).toMatch(/Slept/);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    // Two deploys at once: over HTTP each elicitation is tied to its own call, so both succeed.
    const [x, y] = await Promise.all([
      client.callTool({ name: "deploy", arguments: { service: "x", seconds: 0.1 } }),
      client.callTool({ name: "deploy", arguments: { service: "y", seconds: 0.1 } }),
    ]);
    expect(textOf(x)).toContain("Deployed x");
    expect(textOf(y)).toContain("Deployed y");
    await client.close();
  });
});
