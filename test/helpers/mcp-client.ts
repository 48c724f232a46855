import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";

export interface ConnectOptions {
  /** Answer elicitations with this (declares the elicitation capability). */
  elicit?: (message: string) => ElicitResult;
  sessionId?: string;
  /** The SDK's OAuth client: it discovers the resource and authorization server metadata itself on a 401. */
  authProvider?: OAuthClientProvider;
}

/** The real SDK 1.x client over Streamable HTTP, as a user would run it against taskgate. */
export async function connectClient(mcpUrl: string, options: ConnectOptions = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const capabilities = options.elicit ? { elicitation: {} } : {};
  const client = new Client({ name: "taskgate-test", version: "1.0.0" }, { capabilities });
  const { elicit } = options;
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params.message));
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}
