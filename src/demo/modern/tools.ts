import { McpServer, acceptedContent, inputRequired, type CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { pauseWithProgress, untilAborted } from "../tools/pause.js";

export const MODERN_DEMO_INFO = { name: "taskgate-demo-modern", version: "0.1.0" } as const;

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/**
 * The tools of the 2026-07-28 demo server, written with the SDK's stateless API: a question is an
 * MRTR round (`input_required` with `inputRequests`, and `requestState` to carry what an earlier
 * round learnt: https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr).
 * The server keeps nothing between rounds.
 */
export function createModernDemoServer(log: (line: string) => void): McpServer {
  const server = new McpServer(MODERN_DEMO_INFO, {
    capabilities: { tools: {}, prompts: {} },
    instructions:
      "A 2026-07-28-only demo server: echo, sleep, hang, deploy (asks first), survey (asks twice, the second round carrying requestState); the prompt confirm-greeting asks first too.",
  });
  server.registerTool("echo", { description: "Returns the text it was given.", inputSchema: z.object({ text: z.string() }) }, ({ text: value }) => text(value));
  server.registerTool(
    "sleep",
    { description: "Sleeps for the given seconds; stops when cancelled.", inputSchema: z.object({ seconds: z.number().nonnegative().max(86_400) }) },
    async ({ seconds }, ctx) => {
      await pauseWithProgress({ seconds, intervalMs: 1000, signal: ctx.mcpReq.signal, onTick: async () => undefined });
      return text(`Slept ${seconds} s`);
    },
  );
  server.registerTool("hang", { description: "Never answers; only cancellation ends it.", inputSchema: z.object({}) }, async (_args, ctx) => {
    log("hang started");
    return untilAborted(ctx.mcpReq.signal).catch((err: unknown) => {
      log("hang cancelled");
      throw err;
    });
  });
  addAskingTools(server);
  server.registerPrompt(
    "confirm-greeting",
    { description: "Asks the client to confirm, then greets the given name.", argsSchema: z.object({ name: z.string() }) },
    ({ name }, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      if (responses?.["confirm"] === undefined)
        return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `Greet ${name}?`, requestedSchema: Confirm }) } }) as never;
      const text = acceptedContent(responses, "confirm", Confirm)?.confirm === true ? `Say hello to ${name}.` : `Do not greet ${name}.`;
      return { messages: [{ role: "user" as const, content: { type: "text" as const, text } }] };
    },
  );
  return server;
}

const Confirm = z.object({ confirm: z.boolean() });
const Name = z.object({ name: z.string() });
const Colour = z.object({ colour: z.string() });

function addAskingTools(server: McpServer): void {
  server.registerTool(
    "deploy",
    { description: "Asks for confirmation (one MRTR round), then deploys or not.", inputSchema: z.object({ env: z.string() }) },
    ({ env }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", Confirm);
      if (answer === undefined && ctx.mcpReq.inputResponses?.["confirm"] === undefined)
        return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: Confirm }) } });
      return text(answer?.confirm === true ? `Deployed to ${env}` : `Deploy to ${env} cancelled`);
    },
  );
  server.registerTool(
    "survey",
    { description: "Asks a name, then a colour in a second round; the name travels in requestState.", inputSchema: z.object({}) },
    (_args, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      const state = ctx.mcpReq.requestState<string>();
      const name = state ?? acceptedContent(responses, "name", Name)?.name;
      if (name === undefined) return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: "Your name?", requestedSchema: Name }) } });
      const colour = state === undefined ? undefined : acceptedContent(responses, "colour", Colour)?.colour;
      if (colour === undefined)
        return inputRequired({
          inputRequests: { colour: inputRequired.elicit({ message: `${name}, your colour?`, requestedSchema: Colour }) },
          requestState: name,
        });
      return text(`${name} likes ${colour}`);
    },
  );
}
