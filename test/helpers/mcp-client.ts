import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";

export interface ConnectOptions {
  /** Answer elicitations with this (declares the elicitation capability). */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  sessionId?: string;
  /** Sent with every request (credentials). */
  headers?: Record<string, string>;
  /** Sees the JSON-RPC method of every request the client POSTs. */
  onPost?: (method: string) => void;
  /** The SDK's OAuth client: it discovers the resource and authorization server metadata itself on a 401. */
  authProvider?: OAuthClientProvider;
}

/** The real SDK 1.x client over Streamable HTTP, as a user would run it against taskgate. */
export async function connectClient(mcpUrl: string, options: ConnectOptions = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const capabilities = options.elicit ? { elicitation: {} } : {};
  const client = new Client({ name: "taskgate-test", version: "1.0.0" }, { capabilities });
  const { elicit } = options;
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params.message));
  const { onPost } = options;
  const fetchSeen: typeof fetch = (input, init) => {
    if (onPost && init?.method === "POST" && typeof init.body === "string") {
      const method = (JSON.parse(init.body) as { method?: unknown }).method;
      if (typeof method === "string") onPost(method);
    }
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.headers ? { requestInit: { headers: options.headers } } : {}),
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    ...(onPost ? { fetch: fetchSeen } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}
