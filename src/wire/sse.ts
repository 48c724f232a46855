import type { JsonRpcMessage } from "../jsonrpc/message.js";

const encoder = new TextEncoder();

/**
 * One server-sent-events response body. Writes JSON-RPC messages as `event: message` frames and
 * sends a comment every `keepAliveMs` (none when 0) so idle proxies and load balancers keep the
 * stream open.
 * `closed` turns true when we end it or the client goes away; writes after that are dropped.
 */
export class SseStream {
  private controller?: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive?: NodeJS.Timeout;
  private closeListeners: Array<() => void> = [];
  closed = false;
  readonly body: ReadableStream<Uint8Array>;

  constructor(keepAliveMs: number) {
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        // 0: no keep-alives (http.sseKeepAliveMs).
        if (keepAliveMs <= 0) return;
        this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), keepAliveMs);
        this.keepAlive.unref();
      },
      cancel: () => this.finish(),
    });
  }

  response(headers: Record<string, string> = {}, status = 200): Response {
    return new Response(this.body, {
      status,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers },
    });
  }

  /** False when the stream is gone and the message was not written. */
  send(message: JsonRpcMessage): boolean {
    return this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  close(): void {
    if (this.closed) return;
    try {
      this.controller?.close();
    } catch {
      // already errored by the client going away
    }
    this.finish();
  }

  private write(chunk: string): boolean {
    if (this.closed || !this.controller) return false;
    try {
      this.controller.enqueue(encoder.encode(chunk));
      return true;
    } catch {
      this.finish();
      return false;
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
