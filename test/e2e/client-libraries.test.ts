import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMCPClient } from "@ai-sdk/mcp";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { MCPServerStreamableHttp } from "@openai/agents-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/mcp-client.js";
import { ROOT, startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * The client libraries people embed, each on real processes against taskgate and against the
 * same server asked directly: they list and call alike, a long call with the default
 * configuration returns its result, handle mode gives them a task they follow with the gateway
 * tools, and a question reaches the libraries that answer one.
 */

const LONG_SECONDS = 2.5;
const MCP_REMOTE = join(ROOT, "node_modules/mcp-remote/dist/proxy.js");

/** What every library does: list tool names, call a tool with arguments and get its text, close. */
interface Library {
  names(): Promise<string[]>;
  text(tool: string, args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

const aiSdk = async (url: string, confirm?: boolean): Promise<Library> => {
  const client = await createMCPClient({ transport: { type: "http", url }, ...(confirm !== undefined ? { capabilities: { elicitation: {} } } : {}) });
  if (confirm !== undefined)
    client.onElicitationRequest((await import("@ai-sdk/mcp")).ElicitationRequestSchema, async () => ({ action: "accept", content: { confirm } }));
  return {
    names: async () => (await client.listTools()).tools.map((t) => t.name),
    text: async (tool, args) => {
      const tools = await client.tools();
      const result = await tools[tool]!.execute(args, { toolCallId: "t1", messages: [] });
      return textOf(result);
    },
    close: () => client.close(),
  };
};

const openaiAgents = async (url: string, clientSessionTimeoutSeconds: number | undefined = 30): Promise<Library> => {
  // The default client session timeout is 5 s: a long call needs more, direct as through taskgate.
  const server = new MCPServerStreamableHttp({ url, name: "taskgate", ...(clientSessionTimeoutSeconds ? { clientSessionTimeoutSeconds } : {}) });
  await server.connect();
  return {
    names: async () => (await server.listTools()).map((t) => t.name),
    text: async (tool, args) => (await server.callTool(tool, args)).map((c) => (c as { text?: string }).text ?? "").join(""),
    close: () => server.close(),
  };
};

const langchain = async (url: string): Promise<Library> => {
  const client = new MultiServerMCPClient({ mcpServers: { gw: { url, transport: "http" } }, useStandardContentBlocks: true });
  const tools = await client.getTools();
  return {
    names: async () => tools.map((t) => t.name),
    text: async (tool, args) => {
      const found = tools.find((t) => t.name === tool);
      const result = (await found!.invoke(args)) as unknown;
      if (typeof result === "string") return result;
      const blocks = Array.isArray(result) ? result : [result];
      return blocks.map((b) => (b as { text?: string }).text ?? "").join("");
    },
    close: () => client.close(),
  };
};

/** mcp-remote: the stdio proxy local-only hosts run; an SDK stdio client behind it, as a host would be. */
const mcpRemote = async (url: string, confirm?: boolean): Promise<Library> => {
  const configDir = mkdtempSync(join(tmpdir(), "mcp-remote-"));
  const client = new Client({ name: "host-behind-mcp-remote", version: "1.0.0" }, { capabilities: confirm !== undefined ? { elicitation: {} } : {} });
  if (confirm !== undefined) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { confirm } }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, url, "--allow-http", "--transport", "http-only", "--silent"],
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
    stderr: "ignore",
  });
  await client.connect(transport);
  return {
    names: async () => (await client.listTools()).tools.map((t) => t.name),
    text: async (tool, args) => textOf(await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 30_000 })),
    close: async () => {
      await client.close();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
};

const LIBRARIES = [
  { name: "@ai-sdk/mcp", open: aiSdk, answers: true },
  { name: "@openai/agents-core (MCPServerStreamableHttp)", open: openaiAgents, answers: false },
  { name: "@langchain/mcp-adapters", open: langchain, answers: false },
  { name: "mcp-remote", open: mcpRemote, answers: true },
] as const;

/** The task id a handle-mode answer names. */
const taskIdIn = (text: string) => /as task (\S+?)\./.exec(text)?.[1];

describe("client libraries through taskgate", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let gw: GatewayProcess;
  beforeAll(async () => {
    demo = await startDemoHttp();
    const upstream = { http: { url: demo.mcpUrl } };
    gw = await startGateway({
      upstreams: [
        // The default configuration.
        { name: "demo", path: "/mcp", ...upstream },
        { name: "handled", path: "/handle", ...upstream, unawareClients: "handle", tools: { sleep: { detachAfterMs: 300 } } },
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await demo?.stop();
  });

  it("@openai/agents-core with its default 5 s session timeout: handle mode answers a longer call with a task before it", async () => {
    const lib = await openaiAgents(`${gw.url}/handle`, undefined);
    try {
      const detached = await lib.text("sleep", { seconds: 8 });
      const taskId = taskIdIn(detached);
      expect(taskId, detached).toBeDefined();
      expect(await lib.text("taskgate_cancel", { taskId })).toContain(taskId);
    } finally {
      await lib.close();
    }
  });

  describe.each(LIBRARIES)("$name", ({ open, answers }) => {
    it("lists and calls as it does direct, a long call included", async () => {
      const [direct, through] = await Promise.all([open(demo.mcpUrl), open(gw.mcpUrl)]);
      try {
        expect((await through.names()).sort()).toEqual((await direct.names()).sort());
        expect(await through.text("echo", { text: "hello" })).toBe(await direct.text("echo", { text: "hello" }));
        const [viaGateway, viaDirect] = await Promise.all([through.text("sleep", { seconds: LONG_SECONDS }), direct.text("sleep", { seconds: LONG_SECONDS })]);
        expect(viaGateway).toBe(`Slept ${LONG_SECONDS} s`);
        expect(viaGateway).toBe(viaDirect);
      } finally {
        await Promise.all([direct.close(), through.close()]);
      }
    });

    it("follows a detached call to its result with the gateway tools (handle mode)", async () => {
      const lib = await open(`${gw.url}/handle`);
      try {
        expect(await lib.names()).toEqual(expect.arrayContaining(["sleep", "taskgate_status", "taskgate_result"]));
        const detached = await lib.text("sleep", { seconds: 1 });
        const taskId = taskIdIn(detached);
        expect(taskId, detached).toBeDefined();
        const result = await waitFor(
          async () => {
            const text = await lib.text("taskgate_result", { taskId });
            return text === "Slept 1 s" ? text : undefined;
          },
          { timeoutMs: 15_000, intervalMs: 200, what: "the task's result through the result tool" },
        );
        expect(result).toBe("Slept 1 s");
      } finally {
        await lib.close();
      }
    });

    it.runIf(answers)("answers the upstream's question (elicitation) as it does direct", async () => {
      const [direct, through] = await Promise.all([(open as typeof aiSdk)(demo.mcpUrl, true), (open as typeof aiSdk)(gw.mcpUrl, true)]);
      try {
        const args = { service: "billing", seconds: 0.2 };
        expect(await through.text("deploy", args)).toBe("Deployed billing");
        expect(await direct.text("deploy", args)).toBe("Deployed billing");
      } finally {
        await Promise.all([direct.close(), through.close()]);
      }
    });
  });
});
