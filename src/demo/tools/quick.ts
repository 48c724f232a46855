import { z } from "zod";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { defineTool, text } from "./tool.js";

/** A code of the server-defined range (JSON-RPC 2.0 §5.1), so it is not mistaken for an SDK error. */
export const CRASH_ERROR_CODE = -32000;

export const echo = defineTool({
  name: "echo",
  description: "Returns the given text at once.",
  annotations: { title: "Echo", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.object({ text: z.string().describe("Text to return.") }).strict(),
  run: async ({ text: value }) => text(value),
});

export const fail = defineTool({
  name: "fail",
  description: "Answers with a tool error (a result with isError: true), not a protocol error.",
  annotations: { title: "Fail", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.object({ message: z.string().optional().describe("Text of the error result.") }).strict(),
  run: async ({ message }) => text(message ?? "The tool failed on purpose", true),
});

export const crash = defineTool({
  name: "crash",
  description: `Answers with a JSON-RPC error (code ${CRASH_ERROR_CODE}, with data), as a server that breaks would.`,
  annotations: { title: "Crash", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.object({ message: z.string().optional().describe("Message of the JSON-RPC error.") }).strict(),
  run: async ({ message }) => {
    throw new McpError(CRASH_ERROR_CODE, message ?? "The server crashed on purpose", { tool: "crash", reason: "requested" });
  },
});
