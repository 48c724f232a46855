import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_CLIENT_CAPABILITIES } from "../../src/upstream/connector.js";
import { connectClient } from "../helpers/mcp-client.js";
import { EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";

const EVERYTHING_STDIO = { command: process.execPath, args: [EVERYTHING, "stdio"] };

/** What a client is told by a server: its lists, an echo call, a prompt and a resource. */
async function tour(client: Client) {
  const { tools } = await client.listTools();
  const { prompts } = await client.listPrompts();
  const { resources } = await client.listResources();
  const echo = await client.callTool({ name: "echo", arguments: { message: "everything" } });
  const prompt = await client.getPrompt({ name: prompts[0]!.name, arguments: {} }).catch((err: unknown) => ({ refused: String(err) }));
  const resource = await client.readResource({ uri: resources[0]!.uri });
  return { tools, prompts, resources, echo, prompt, resource };
}

describe("taskgate in front of @modelcontextprotocol/server-everything over stdio", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "everything", path: "/mcp", stdio: EVERYTHING_STDIO }] });
  });
  afterAll(async () => gw?.stop());

  it("lists its tools, resources and prompts and calls its echo tool, as the server asked directly answers", async () => {
    // Declaring what taskgate declares upstream: server-everything offers some tools only to clients that can answer them.
    const direct = new Client({ name: "everything-direct", version: "1" }, { capabilities: GATEWAY_CLIENT_CAPABILITIES });
    await direct.connect(new StdioClientTransport({ ...EVERYTHING_STDIO, stderr: "ignore" }));
    const { client } = await connectClient(gw.mcpUrl);
    try {
      const [asked, through] = await Promise.all([tour(direct), tour(client)]);
      // One difference, taskgate's own: a tool the server runs only plainly may run as a task of taskgate's.
      const taskSupport = (tools: typeof asked.tools) => tools.map((t) => t.execution?.taskSupport);
      expect(taskSupport(through.tools)).toEqual(taskSupport(asked.tools).map((t) => (t === "required" ? t : "optional")));
      const plain = (tools: typeof asked.tools) => tools.map(({ execution, ...tool }) => ({ ...tool, execution: { ...execution, taskSupport: undefined } }));
      expect({ ...through, tools: plain(through.tools) }).toEqual({ ...asked, tools: plain(asked.tools) });
      // The comparison means something only if the server said something.
      expect(asked.tools.map((t) => t.name)).toContain("echo");
      expect(asked.echo).toMatchObject({ content: [{ type: "text", text: expect.stringContaining("everything") }] });
      expect(asked.prompts.length).toBeGreaterThan(0);
      expect(asked.resources.length).toBeGreaterThan(0);
    } finally {
      await client.close();
      await direct.close();
    }
  });
});
