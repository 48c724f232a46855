import type { JsonRpcId, JsonRpcResponse } from "../jsonrpc/message.js";
import { UpstreamError } from "./connector.js";
import { InFlightMap } from "../util/in-flight-map.js";

export interface WaitOptions {
  method: string;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** The configuration key that set `timeoutMs`, named in the error so the reader knows what to change. */
  timeoutSetting?: string | undefined;
  /** The connector gave up on its own (timeout): nobody else knows to cancel upstream. */
  onTimeout?: (() => void) | undefined;
  /** Receives a function that stops waiting, like aborting `signal` (UpstreamRequest.stopWaiting). */
  stopWaiting?: ((stop: (reason?: unknown) => void) => void) | undefined;
}

/**
 * One request waiting for its response. A plain object with methods rather than a set of
 * closures: a detached call keeps its entry for as long as the upstream runs, and 10,000 of them
 * are held at once.
 */
class Entry {
  timer: NodeJS.Timeout | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(
    readonly id: JsonRpcId,
    readonly method: string,
    readonly signal: AbortSignal | undefined,
    readonly resolve: (response: JsonRpcResponse) => void,
    readonly reject: (error: UpstreamError) => void,
  ) {}

  /** For the caller to stop waiting (WaitOptions.stopWaiting). */
  stopper(pending: PendingRequests): (cause?: unknown) => void {
    return (cause) => pending.stop(this, cause);
  }
}

/**
 * Requests sent upstream that still wait for their response, keyed by the id the connector chose.
 *
 * Ids are numbers counted from 1 for the whole life of the connector, across restarts and
 * re-initializations, so a response can never be mistaken for one from an earlier session.
 */
export class PendingRequests {
  private lastId = 0;
  private readonly entries = new InFlightMap<JsonRpcId, Entry>();

  constructor(
    private readonly upstreamName: string,
    /** Told whenever an entry goes away, however it went (the HTTP link closes that stream). */
    private readonly onRelease: (id: JsonRpcId) => void = () => {},
  ) {}

  allocate(): number {
    return ++this.lastId;
  }

  has(id: JsonRpcId): boolean {
    return this.entries.has(id);
  }

  wait(id: JsonRpcId, options: WaitOptions): Promise<JsonRpcResponse> {
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const { signal } = options;
      const entry = new Entry(id, options.method, signal, resolve, reject);
      this.entries.set(id, entry);
      if (signal?.aborted) return this.stop(entry, signal.reason);
      if (signal) {
        entry.onAbort = () => this.stop(entry, signal.reason);
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      if (options.timeoutMs !== undefined) entry.timer = this.expiry(id, options);
      // Last: a caller that has already given up stops at once, and the release clears the timer.
      options.stopWaiting?.(entry.stopper(this));
    });
  }

  /** False when nobody waits for this id any more (aborted, timed out, or never ours). */
  settle(response: JsonRpcResponse): boolean {
    const entry = response.id === null ? undefined : this.entries.get(response.id);
    if (!entry) return false;
    this.release(entry);
    entry.resolve(response);
    return true;
  }

  fail(id: JsonRpcId, error: UpstreamError): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.release(entry);
    entry.reject(error);
  }

  failAll(error: UpstreamError): void {
    for (const id of [...this.entries.keys()]) this.fail(id, error);
  }

  /** Stop waiting for the caller (its signal or its stop function), unless it is settled already. */
  stop(entry: Entry, cause: unknown): void {
    if (this.entries.get(entry.id) !== entry) return;
    this.release(entry);
    entry.reject(this.abortError(entry.id, entry.method, cause));
  }

  /** A method of its own: only a request with a timeout keeps its options (in the timer's closure). */
  private expiry(id: JsonRpcId, options: WaitOptions): NodeJS.Timeout {
    return setTimeout(() => this.expire(id, options), options.timeoutMs);
  }

  private release(entry: Entry): void {
    clearTimeout(entry.timer);
    if (entry.onAbort) entry.signal?.removeEventListener("abort", entry.onAbort);
    this.entries.delete(entry.id);
    this.onRelease(entry.id);
  }

  private expire(id: JsonRpcId, options: WaitOptions): void {
    const message = `upstream '${this.upstreamName}' did not answer ${options.method} (id ${id}) within ${options.timeoutMs} ms${options.timeoutSetting ? ` (${options.timeoutSetting})` : ""}`;
    this.fail(id, new UpstreamError(message, "timeout"));
    options.onTimeout?.();
  }

  /** Aborting only stops waiting (connector contract): reason "closed", the caller's reason as cause. */
  private abortError(id: JsonRpcId, method: string, cause: unknown): UpstreamError {
    const error = new UpstreamError(`stopped waiting for ${method} (id ${id}) to upstream '${this.upstreamName}': aborted by the caller`, "closed");
    return Object.assign(error, { cause });
  }
}
