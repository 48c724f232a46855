#!/usr/bin/env node
// A legacy, blocking MCP server over stdio, written with the MCP TypeScript SDK 1.x as most
// servers are: it knows nothing of tasks (the SDK even declares taskSupport "forbidden"), and
// `build_report` takes as long as it takes. taskgate in front of it
// (config/recipes/retrofit-node.yaml) gives its clients tasks.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "node-report-server", version: "1.0.0" });

server.registerTool(
  "build_report",
  { description: "Builds a report; takes the given seconds, reporting progress every second.", inputSchema: { seconds: z.number().min(0) } },
  async ({ seconds }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= Math.ceil(seconds); step++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, (seconds - step + 1) * 1000)));
      if (extra.signal.aborted) throw new Error("cancelled");
      if (token !== undefined)
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, message: `Report ${Math.min(step, seconds)}s of ${seconds}s` },
        });
    }
    return { content: [{ type: "text", text: `Report ready after ${seconds} s` }] };
  },
);

await server.connect(new StdioServerTransport());
