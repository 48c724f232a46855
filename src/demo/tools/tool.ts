import { z } from "zod";
import type { CallToolResult, ElicitRequestFormParams, ElicitResult, Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";

/** What a demo tool may do while it runs; built per call from the SDK's request context. */
export interface ToolContext {
  /** Aborted when the client cancels the call or the connection closes. */
  signal: AbortSignal;
  /** Sends notifications/progress when the caller gave a progressToken; a no-op otherwise. */
  progress(progress: number, total: number, message: string): Promise<void>;
  /** Asks the client a question on this call's own stream (HTTP) or connection (stdio). */
  elicit(params: ElicitRequestFormParams): Promise<ElicitResult>;
  /** Sends a notification without params, e.g. notifications/tools/list_changed. */
  notify(method: string): Promise<void>;
  /** One line for the operator (stderr); never stdout, which carries MCP in stdio mode. */
  log(line: string): void;
}

export interface DemoTool {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  input: z.ZodObject;
  run(args: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

/** Keeps the zod schema, the JSON schema in tools/list and the typed handler in one place. */
export function defineTool<S extends z.ZodObject>(tool: {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  input: S;
  run(args: z.output<S>, ctx: ToolContext): Promise<CallToolResult>;
}): DemoTool {
  return { ...tool, run: (args, ctx) => tool.run(args as z.output<S>, ctx) };
}

export function toListedTool(tool: DemoTool): Tool {
  // JSON.parse(JSON.stringify()) keeps only the plain JSON Schema; "$schema" is noise in tools/list.
  const { $schema: _dialect, ...schema } = JSON.parse(JSON.stringify(z.toJSONSchema(tool.input, { io: "input" }))) as Record<string, unknown>;
  return {
    name: tool.name,
    description: tool.description,
    annotations: tool.annotations,
    inputSchema: { ...schema, type: "object" },
  };
}

export function text(value: string, isError = false): CallToolResult {
  return isError ? { content: [{ type: "text", text: value }], isError } : { content: [{ type: "text", text: value }] };
}
