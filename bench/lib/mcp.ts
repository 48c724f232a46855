/**
 * The two wires the bench speaks, built by hand so the load generator sends exactly what a client
 * would: a 2025-11-25 session (initialize, then Mcp-Session-Id on every call), and 2026-07-28, where
 * each request carries its version and capabilities in `_meta` and repeats method and name in headers.
 */
export const LEGACY = "2025-11-25";
export const MODERN = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };
const ACCEPT = "application/json, text/event-stream";

export interface WireRequest {
  headers: Record<string, string>;
  body: string;
}

/** `[<id>]` is replaced by autocannon with a fresh id per request: concurrent calls never share one. */
export const ID_SLOT = "[<id>]";

export function legacyRequest(sessionId: string, method: string, params: Record<string, unknown>, id: string = ID_SLOT): WireRequest {
  return {
    headers: { "content-type": "application/json", accept: ACCEPT, "mcp-session-id": sessionId, "mcp-protocol-version": LEGACY },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  };
}

/** A 2025-11-25 request to a server without sessions (stateless): no Mcp-Session-Id. */
export function sessionlessRequest(method: string, params: Record<string, unknown>, id: string = ID_SLOT): WireRequest {
  return {
    headers: { "content-type": "application/json", accept: ACCEPT, "mcp-protocol-version": LEGACY },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  };
}

/** `name` goes in `Mcp-Name`, for the methods that have one (tools/call, tasks/*). */
export function modernRequest(
  method: string,
  name: string | undefined,
  params: Record<string, unknown>,
  capabilities: object = {},
  id: string = ID_SLOT,
): WireRequest {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "taskgate-bench", version: "1" },
  };
  const headers: Record<string, string> = { "content-type": "application/json", accept: ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method };
  if (name !== undefined) headers["mcp-name"] = name;
  return {
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
  };
}

export const echoParams = { name: "echo", arguments: { text: "hello from the bench" } };

/** POST one request and return its JSON-RPC response, whether it came as JSON or as an SSE stream. */
export async function rpc(url: string, req: WireRequest): Promise<{ status: number; headers: Headers; message: any }> {
  const res = await fetch(url, { method: "POST", headers: req.headers, body: req.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, message: responseIn(text) };
}

/** The JSON-RPC response in a reply body: a JSON object, or the first SSE `data:` frame that is one. */
export function responseIn(text: string): any {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed);
  for (const line of text.split("\n")) {
    // 2025-11-25 servers may open a stream with an empty priming event (an id for resumption).
    if (!line.startsWith("data:") || !line.slice(5).trim()) continue;
    const frame = JSON.parse(line.slice(5));
    if ("result" in frame || "error" in frame) return frame;
  }
  return undefined;
}

/** Open a legacy-era session by hand; resolves with its id. */
export async function openSession(url: string): Promise<string> {
  const init = {
    headers: { "content-type": "application/json", accept: ACCEPT },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "taskgate-bench", version: "1" } },
    }),
  };
  const res = await rpc(url, init);
  const id = res.headers.get("mcp-session-id");
  if (res.status !== 200 || !id) throw new Error(`initialize answered ${res.status}: ${JSON.stringify(res.message)}`);
  const initialized = legacyRequest(id, "notifications/initialized", {});
  const body = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  await fetch(url, { method: "POST", headers: initialized.headers, body }).then((r) => r.text());
  return id;
}

/** A reply counts only when it is a JSON-RPC result without a tool error. */
export function isGoodReply(body: string): boolean {
  return body.includes('"result"') && !body.includes('"isError":true') && !body.includes('"error":{');
}
