import { MODERN } from "./modern.js";
import { ACCEPT_BOTH } from "./raw.js";
import { openSse, type SseReader } from "./sse-reader.js";

export type ListenStream = SseReader;

/** A 2026-07-28 `subscriptions/listen` request (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, and https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions), read as its SSE frames arrive. */
export function openListen(
  url: string,
  id: number | string,
  notifications: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): Promise<ListenStream> {
  const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": capabilities };
  return openSse(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { _meta: meta, notifications } }),
  });
}
