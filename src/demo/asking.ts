import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ElicitRequestFormParams,
  type ElicitResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const PROMPT = "confirm-greeting";
const ASK_PREFIX = "demo://ask/";

/**
 * A prompt and a resource that ask the client a question (elicitation) before they answer: how
 * a question during prompts/get or resources/read (an MRTR round on 2026-07-28) is exercised
 * against an unmodified server.
 */
export function addAskingPromptAndResource(server: Server): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: PROMPT,
        description: "Asks the client to confirm, then greets the given name.",
        arguments: [{ name: "name", description: "Whom to greet.", required: true }],
      },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) => {
    if (request.params.name !== PROMPT) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    return confirmGreeting(request.params.arguments?.["name"], extra);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: `${ASK_PREFIX}{topic}`, name: "ask", description: "Asks the client about the topic, then returns the answer.", mimeType: "text/plain" },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => readAsk(request.params.uri, extra));
}

async function confirmGreeting(name: string | undefined, extra: Extra) {
  if (!name) throw new McpError(ErrorCode.InvalidParams, `${PROMPT} needs the argument 'name'`);
  const answer = await elicit(extra, {
    mode: "form",
    message: `Greet ${name}?`,
    requestedSchema: { type: "object", properties: { confirm: { type: "boolean", title: "Confirm" } }, required: ["confirm"] },
  });
  const text = answer.action === "accept" && answer.content?.["confirm"] === true ? `Say hello to ${name}.` : `Do not greet ${name}.`;
  return { description: `A greeting for ${name}`, messages: [{ role: "user" as const, content: { type: "text" as const, text } }] };
}

async function readAsk(uri: string, extra: Extra) {
  const topic = uri.startsWith(ASK_PREFIX) ? decodeURIComponent(uri.slice(ASK_PREFIX.length)) : "";
  if (!topic) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
  const answer = await elicit(extra, {
    mode: "form",
    message: `What about ${topic}?`,
    requestedSchema: { type: "object", properties: { answer: { type: "string", title: "Answer" } }, required: ["answer"] },
  });
  const said = answer.action === "accept" ? String(answer.content?.["answer"] ?? "") : "(declined)";
  return { contents: [{ uri, mimeType: "text/plain", text: `${topic}: ${said}` }] };
}

/** On this request's own stream (HTTP) or connection (stdio); a cancelled request stops waiting. */
function elicit(extra: Extra, params: ElicitRequestFormParams): Promise<ElicitResult> {
  return extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, { signal: extra.signal });
}
