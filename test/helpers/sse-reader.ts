import { createParser } from "eventsource-parser";
import { waitFor } from "./wait-for.js";

export interface SseReader {
  status: number;
  /** Every JSON-RPC message received so far, in order. */
  messages: any[];
  /** The first message (from index `from` on) that `match` accepts, within the deadline. */
  next(match: (message: any) => boolean, what: string, from?: number): Promise<any>;
  close(): void;
}

/** Open a request whose answer is an SSE stream (or one JSON body) and read its messages as they arrive. */
export async function openSse(url: string, init: RequestInit): Promise<SseReader> {
  const abort = new AbortController();
  const res = await fetch(url, { ...init, signal: abort.signal });
  const messages: any[] = [];
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream") && res.body) {
    const parser = createParser({ onEvent: (event) => void messages.push(JSON.parse(event.data)) });
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    })().catch(() => undefined);
  } else messages.push(await res.json().catch(() => undefined));
  return {
    status: res.status,
    messages,
    next: (match, what, from = 0) => waitFor(() => messages.slice(from).find(match), { timeoutMs: 15_000, what }),
    close: () => abort.abort(),
  };
}
