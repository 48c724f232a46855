import type { Dispatcher } from "undici";
import { RequestAbort } from "./request-abort.js";

/** What the body holds before anyone reads it; past this undici stops reading the socket until a reader comes. */
const UNREAD_BYTES = 64 * 1024;

/** Either kind of abort an exchange takes: a web AbortSignal, or the link's lighter RequestAbort. */
export type ExchangeSignal = AbortSignal | RequestAbort;

/**
 * One upstream HTTP exchange as an undici dispatch handler
 * (https://undici.nodejs.org/#/docs/api/Dispatcher?id=dispatcherdispatchoptions-handler): the
 * response's status and headers to `answered`, its body to whoever reads it. undici's `request`
 * wraps the same dispatch in an async resource, a Readable body and an abort listener
 * (docs/contributing/performance.md#the-exchange-without-a-stream).
 */
export class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private readonly body = new ResponseBody(this);
  private answered: ((err: Error | null, response?: ExchangeResponse) => void) | undefined;
  /** The exchange is over, however it ended. */
  private settled = false;
  /** Why it was ended before undici started it: undici is told when it does. */
  private abortedWith: Error | undefined;

  constructor(
    private readonly signal: ExchangeSignal | undefined,
    answered: (err: Error | null, response?: ExchangeResponse) => void,
  ) {
    this.answered = answered;
    if (signal === undefined || signal.aborted) return;
    if (signal instanceof RequestAbort) signal.listen(this.onAbort);
    else signal.addEventListener("abort", this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => this.abort(this.signal?.reason);

  /** Ends the exchange now, for `reason`, which a reader is told: the connection closes unless the response was complete. */
  abort(reason: unknown): void {
    if (this.settled) return;
    this.fail(reason);
    const err = asError(reason);
    if (this.controller) this.controller.abort(err);
    else this.abortedWith = err;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortedWith) controller.abort(this.abortedWith);
    else if (this.signal?.aborted) this.onAbort();
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx informational answers come before the real one (RFC 9110 §15.2).
    if (statusCode < 200) return;
    const answered = this.answered;
    this.answered = undefined;
    answered?.(null, new ExchangeResponse(statusCode, headers, this.body));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.body.push(chunk)) return;
    controller.pause();
  }

  onResponseEnd(): void {
    this.finish();
    this.body.end(undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  /** The reader drained what was held: the socket is read again. */
  resume(): void {
    this.controller?.resume();
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.finish();
    const answered = this.answered;
    this.answered = undefined;
    if (answered) answered(asError(err));
    else this.body.end(err ?? new Error("aborted"));
  }

  private finish(): void {
    this.settled = true;
    const signal = this.signal;
    if (signal === undefined) return;
    if (signal instanceof RequestAbort) signal.listen(undefined);
    else signal.removeEventListener("abort", this.onAbort);
  }

  /** Whether the exchange is over: the body complete, broken or aborted. */
  get over(): boolean {
    return this.settled;
  }
}

/** The status and headers of an answer; header names are lower-case, repeated ones joined with ", ". */
export class ExchangeResponse {
  readonly ok: boolean;

  constructor(
    readonly status: number,
    private readonly headers: Record<string, string | string[] | undefined>,
    readonly body: ResponseBody,
  ) {
    this.ok = status >= 200 && status < 300;
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  /** Stop reading: a body not read to its end closes its connection rather than poisoning the pool. */
  discard(): Promise<void> {
    this.body.cancel();
    return Promise.resolve();
  }
}

type Reader = { onChunk: (chunk: Uint8Array) => void; resolve: () => void; reject: (err: unknown) => void };

/**
 * A response body read by one reader, handed each chunk as undici parses it. Until the reader
 * comes, chunks wait here (at most UNREAD_BYTES before the socket is paused).
 */
export class ResponseBody {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private reader: Reader | undefined;
  private ended = false;
  private error: unknown;

  constructor(private readonly exchange: Exchange) {}

  /** A chunk from the socket; false asks undici to stop reading until `resume`. */
  push(chunk: Buffer): boolean {
    const reader = this.reader;
    if (reader === undefined) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      return this.heldBytes < UNREAD_BYTES;
    }
    this.handOver(reader, chunk);
    return true;
  }

  /** False when the reader threw: it is rejected with that, and the exchange ends. */
  private handOver(reader: Reader, chunk: Uint8Array): boolean {
    try {
      reader.onChunk(chunk);
      return true;
    } catch (err) {
      this.reader = undefined;
      this.exchange.abort(err);
      reader.reject(err);
      return false;
    }
  }

  /** The body's end (`err` undefined) or its break. */
  end(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    const reader = this.reader;
    if (reader === undefined) return;
    this.reader = undefined;
    if (err === undefined) reader.resolve();
    else reader.reject(err);
  }

  /**
   * Hands every chunk to `onChunk`, resolving at the body's end. Rejects when the body breaks,
   * or with what `onChunk` threw, after closing the exchange, as leaving a `for await` loop does.
   */
  read(onChunk: (chunk: Uint8Array) => void): Promise<void> {
    if (this.reader !== undefined) return Promise.reject(new Error("the response body is read already"));
    return new Promise((resolve, reject) => {
      const reader: Reader = { onChunk, resolve, reject };
      const held = this.held;
      this.held = [];
      this.heldBytes = 0;
      for (const chunk of held) if (!this.handOver(reader, chunk)) return;
      if (this.ended) return this.error === undefined ? resolve() : reject(this.error);
      this.reader = reader;
      this.exchange.resume();
    });
  }

  /** Nobody will read it: an unfinished exchange is ended, closing its connection. */
  cancel(): void {
    this.held = [];
    this.heldBytes = 0;
    if (!this.exchange.over) this.exchange.abort(new Error("the response body was discarded"));
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
}
