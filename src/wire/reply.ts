import type { JsonRpcMessage } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { httpStatusOf } from "./errors.js";
import { jsonReply, tagReply } from "./reply-outcome.js";
import { SseStream } from "./sse.js";
import { deadlinesOf } from "./deadlines.js";

export type { MessageSink };

export interface Accepts {
  json: boolean;
  sse: boolean;
}

/** Accept headers read before, by value: a client sends the same one with every request. */
const readAccepts = new Map<string, Readonly<Accepts>>();
const MAX_READ_ACCEPTS = 64;
const MAX_KEPT_ACCEPT_LENGTH = 256;

/** What the client's Accept header allows (`*\/*`, `application/*`, `text/*` count). Not to be changed: it may be shared. */
export function parseAccept(header: string | undefined): Readonly<Accepts> {
  const value = header ?? "";
  const known = readAccepts.get(value);
  if (known) return known;
  const types = value.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  const has = (full: string, family: string) => types.some((t) => t === full || t === "*/*" || t === family);
  const accepts = Object.freeze({ json: has("application/json", "application/*"), sse: has("text/event-stream", "text/*") });
  if (value.length <= MAX_KEPT_ACCEPT_LENGTH) {
    if (readAccepts.size >= MAX_READ_ACCEPTS) readAccepts.clear();
    readAccepts.set(value, accepts);
  }
  return accepts;
}

/**
 * The HTTP reply to one POSTed request. It stays a plain JSON response unless something has to be
 * streamed before the response is ready (progress, an elicitation): then it turns into an SSE
 * stream at the first such message. Clients that accept only SSE get SSE from the start. This keeps
 * the fast path (most calls) a single JSON body.
 */
export class CallReply implements MessageSink {
  private stream?: SseStream;
  /** While `respond` waits for a plain reply: answers with the stream instead, once one opens first. */
  private streamFirst: (() => void) | undefined;

  constructor(
    private readonly accepts: Accepts,
    private readonly keepAliveMs: number,
    private readonly headers?: Record<string, string>,
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
   * comments reach proxies that cut idle connections (docs/guides/behind-a-timeout.md). One
   * promise and one reaction per reply: this runs for every relayed call.
   */
  respond(work: Promise<JsonRpcMessage>): Promise<Response> {
    // Streaming already (startStream, or a message sent before the call was handed over).
    if (!this.accepts.json || this.stream) return Promise.resolve(this.streamed(work));
    return new Promise((resolve) => {
      // One timer for all the replies waiting (deadlines.ts), not one each.
      const deadlines = this.accepts.sse && this.keepAliveMs > 0 ? deadlinesOf(this.keepAliveMs) : undefined;
      const idle = deadlines?.set(() => this.startStream());
      this.streamFirst = () => resolve(this.streamed(work));
      void work.then((message) => {
        if (idle) deadlines?.clear(idle);
        if (this.stream) return; // answered with the stream, which sends it
        this.streamFirst = undefined;
        const status = httpStatusOf(message) ?? 200;
        resolve(jsonReply(message, status, this.headers));
      });
    });
  }

  private streamed(work: Promise<JsonRpcMessage>): Response {
    const stream = this.openStream();
    void work.then((message) => {
      stream.send(message);
      stream.close();
    });
    return tagReply(stream.response(this.headers ?? {}), work);
  }

  private openStream(): SseStream {
    if (!this.stream) {
      this.stream = new SseStream(this.keepAliveMs);
      const first = this.streamFirst;
      this.streamFirst = undefined;
      first?.();
    }
    return this.stream;
  }
}
