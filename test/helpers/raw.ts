/** Raw Streamable HTTP requests, for what the SDK client would never send. */
export const ACCEPT_BOTH = "application/json, text/event-stream";

export function postRequest(url: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(postRequest(url, body, headers));
}

/** Where a request goes: the network, or an in-process app's `request`. */
export type Send = (request: Request) => Promise<Response>;

/** Open a legacy session by hand; returns its id. */
export async function openSession(
  url: string,
  capabilities: Record<string, unknown> = {},
  protocolVersion = "2025-06-18",
  send: Send = fetch,
): Promise<string> {
  const post = (body: unknown, headers: Record<string, string> = {}) => send(postRequest(url, body, headers));
  const res = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
  });
  if (!res.ok) throw new Error(`initialize answered ${res.status}: ${await res.text()}`);
  const id = res.headers.get("mcp-session-id");
  if (!id) throw new Error("initialize gave no session id");
  await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id });
  return id;
}

/** Read a JSON or SSE reply and return the JSON-RPC messages in it. */
export async function messagesOf(res: Response): Promise<any[]> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream"))
    return text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
  return text ? [JSON.parse(text)] : [];
}
