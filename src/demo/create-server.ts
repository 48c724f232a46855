import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { addAskingPromptAndResource } from "./asking.js";
import { demoTools, toListedTool, type ToolContext } from "./tools/index.js";

export const DEMO_SERVER_INFO = { name: "taskgate-demo", version: "0.1.0" } as const;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One MCP server object per connection (the SDK binds a Server to one transport).
 * The low-level Server is used on purpose: McpServer would turn a thrown error into an
 * `isError` result, and `crash` must produce a real JSON-RPC error.
 */
export function createDemoServer(log: (line: string) => void): Server {
  const server = new Server(DEMO_SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
    instructions:
      "A blocking demo server: echo, sleep, deploy (asks first), fail, crash, hang, routed (an x-mcp-header argument), change-lists; the prompt confirm-greeting and the resources demo://ask/{topic} ask first too.",
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: demoTools.map(toListedTool) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request.params.name, request.params.arguments ?? {}, toolContext(extra, log)));
  addAskingPromptAndResource(server);
  return server;
}

async function callTool(name: string, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const tool = demoTools.find((t) => t.name === name);
  // Unknown tool and bad arguments are protocol errors (-32602), as the spec's tools page says.
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${name}: ${detail}`);
  }
  return tool.run(parsed.data, ctx);
}

function toolContext(extra: Extra, log: (line: string) => void): ToolContext {
  const progressToken = extra._meta?.progressToken;
  return {
    signal: extra.signal,
    log,
    progress: async (progress, total, message) => {
      if (progressToken === undefined) return;
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total, message } });
    },
    // extra.sendRequest relates the question to this call, so over HTTP it travels on the call's
    // own SSE stream; the signal makes a cancelled call stop waiting for the answer.
    notify: (method) => extra.sendNotification({ method } as ServerNotification),
    elicit: (params) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, { signal: extra.signal }),
  };
}
