import type { JsonRpcMessage } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { httpStatusOf } from "./errors.js";
import { tagReply } from "./reply-outcome.js";
import { SseStream } from "./sse.js";

export type { MessageSink };

export interface Accepts {
  json: boolean;
  sse: boolean;
}

/** What the client's Accept header allows (`*\/*`, `application/*`, `text/*` count). */
export function parseAccept(header: string | undefined): Accepts {
  const types = (header ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  const has = (full: string, family: string) => types.some((t) => t === full || t === "*/*" || t === family);
  return { json: has("application/json", "application/*"), sse: has("text/event-stream", "text/*") };
}

/**
 * The HTTP reply to one POSTed request. It stays a plain JSON response unless something has to be
 * streamed before the response is ready (progress, an elicitation): then it turns into an SSE
 * stream at the first such message. Clients that accept only SSE get SSE from the start. This keeps
 * the fast path (most calls) a single JSON body.
 */
export class CallReply implements MessageSink {
  private stream?: SseStream;
  private wakeStream!: () => void;
  private readonly streamStarted = new Promise<void>((resolve) => (this.wakeStream = resolve));

  constructor(
    private readonly accepts: Accepts,
    private readonly keepAliveMs: number,
    private readonly headers: Record<string, string> = {},
  ) {}

  send(message: JsonRpcMessage): boolean {
    if (!this.accepts.sse) return false;
    return this.openStream().send(message);
  }

  /** Start streaming now (long waits: the keep-alive comments keep proxies from closing it). */
  startStream(): void {
    if (this.accepts.sse) this.openStream();
  }

  /**
   * Resolve `work` (which never rejects) into the HTTP response. A call still running after
   * `keepAliveMs` turns into an SSE stream when the client accepts one, so its keep-alive
   * comments reach proxies that cut idle connections (README "Recipes": behind a timeout).
   */
  async respond(work: Promise<JsonRpcMessage>): Promise<Response> {
    if (!this.accepts.json) return this.streamed(work);
    const idle = this.accepts.sse && this.keepAliveMs > 0 ? setTimeout(() => this.startStream(), this.keepAliveMs) : undefined;
    const first = await Promise.race([work.then((message) => ({ message })), this.streamStarted.then(() => undefined)]);
    clearTimeout(idle);
    if (first && !this.stream) return tagReply(Response.json(first.message, { headers: this.headers, status: httpStatusOf(first.message) ?? 200 }), first.message);
    return this.streamed(work);
  }

  private streamed(work: Promise<JsonRpcMessage>): Response {
    const stream = this.openStream();
    void work.then((message) => {
      stream.send(message);
      stream.close();
    });
    return tagReply(stream.response(this.headers), work);
  }

  private openStream(): SseStream {
    if (!this.stream) {
      this.stream = new SseStream(this.keepAliveMs);
      this.wakeStream();
    }
    return this.stream;
  }
}
