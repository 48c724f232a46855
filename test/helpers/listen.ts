import { createParser } from "eventsource-parser";
import { MODERN } from "./modern.js";
import { ACCEPT_BOTH } from "./raw.js";
import { waitFor } from "./wait-for.js";

export interface ListenStream {
  status: number;
  /** Every JSON-RPC message received so far, in order. */
  messages: any[];
  /** The first message (from `from` on) that `match` accepts, within the deadline. */
  next(match: (message: any) => boolean, what: string, from?: number): Promise<any>;
  close(): void;
}

/** A 2026-07-28 `subscriptions/listen` request (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, and https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions), read as its SSE frames arrive. */
export async function openListen(url: string, id: number | string, notifications: Record<string, unknown>, capabilities: Record<string, unknown>): Promise<ListenStream> {
  const abort = new AbortController();
  const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": capabilities };
  const res = await fetch(url, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { _meta: meta, notifications } }),
  });
  const messages: any[] = [];
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream") && res.body) {
    const parser = createParser({ onEvent: (event) => void messages.push(JSON.parse(event.data)) });
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    })().catch(() => undefined);
  } else messages.push(await res.json());
  return {
    status: res.status,
    messages,
    next: (match, what, from = 0) => waitFor(() => messages.slice(from).find(match), { timeoutMs: 15_000, what }),
    close: () => abort.abort(),
  };
}
