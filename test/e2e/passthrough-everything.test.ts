import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";

describe("taskgate in front of @modelcontextprotocol/server-everything over stdio", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "everything", path: "/mcp", stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] } }] });
  });
  afterAll(async () => gw?.stop());

  it("lists its tools, resources and prompts and calls its echo tool", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(3);
    const echo = tools.find((t) => t.name === "echo");
    expect(echo).toBeDefined();
    expect(textOf(await client.callTool({ name: "echo", arguments: { message: "everything" } }))).toContain("everything");
    expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
    expect((await client.listResources()).resources.length).toBeGreaterThan(0);
    await client.close();
  });
});
