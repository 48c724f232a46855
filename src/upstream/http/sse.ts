import { eachChunk, type ChunkSource } from "./each-chunk.js";
import { createParser } from "eventsource-parser";

export interface SseHandlers {
  /** One event's `data`; the empty priming event of a resumable stream is not passed on. */
  onData(data: string): void;
  /** Every event id seen, for resuming with `Last-Event-ID`. */
  onEventId(id: string): void;
  onRetry(ms: number): void;
}

/**
 * Reads one `text/event-stream` body to its end. Throws when the connection breaks or one event
 * grows past `maxEventChars`, so a misbehaving upstream cannot make us buffer without bound.
 */
export async function readSse(body: ChunkSource, maxEventChars: number, handlers: SseHandlers): Promise<void> {
  let overflow = false;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent: (event) => {
      // One read can hold a whole event the parser never had to buffer: the bound is on the event.
      if (overflow || event.data.length > maxEventChars) return void (overflow = true);
      if (event.id !== undefined) handlers.onEventId(event.id);
      if ((event.event === undefined || event.event === "message") && event.data.trim() !== "") handlers.onData(event.data);
    },
    onRetry: handlers.onRetry,
    onError: (err) => {
      if (err.type === "max-buffer-size-exceeded") overflow = true;
    },
  });
  // A web stream (fetch) or a Node stream (the relay's client); a throw cancels either. One
  // TextDecoder rather than a TextDecoderStream: a transform stream per response cost more than the parsing.
  const decoder = new TextDecoder();
  await eachChunk(body, (chunk) => {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (overflow) throw new Error(`an SSE event from the upstream is longer than ${maxEventChars} characters (upstreams[].http.maxMessageBytes)`);
  });
  parser.feed(decoder.decode());
}
