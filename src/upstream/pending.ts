import type { JsonRpcId, JsonRpcResponse } from "../jsonrpc/message.js";
import { UpstreamError } from "./connector.js";

export interface WaitOptions {
  method: string;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** The connector gave up on its own (timeout): nobody else knows to cancel upstream. */
  onTimeout?: (() => void) | undefined;
  /** Receives a function that stops waiting, like aborting `signal` (UpstreamRequest.stopWaiting). */
  stopWaiting?: ((stop: (reason?: unknown) => void) => void) | undefined;
}

interface Entry {
  resolve(response: JsonRpcResponse): void;
  reject(error: UpstreamError): void;
}

/**
 * Requests sent upstream that still wait for their response, keyed by the id the connector chose.
 *
 * Ids are numbers counted from 1 for the whole life of the connector, across restarts and
 * re-initializations, so a response can never be mistaken for one from an earlier session.
 */
export class PendingRequests {
  private lastId = 0;
  private readonly entries = new Map<JsonRpcId, Entry>();

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
      let timer: NodeJS.Timeout | undefined;
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.entries.delete(id);
        this.onRelease(id);
      };
      const stop = (cause: unknown): void => {
        if (this.entries.get(id) !== entry) return; // settled already
        cleanup();
        reject(this.abortError(id, options.method, cause));
      };
      const onAbort = (): void => stop(signal?.reason);
      const entry: Entry = {
        resolve: (r) => (cleanup(), resolve(r)),
        reject: (e) => (cleanup(), reject(e)),
      };
      this.entries.set(id, entry);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      if (options.timeoutMs !== undefined) timer = setTimeout(() => this.expire(id, options), options.timeoutMs);
      // Last: a caller that has already given up stops at once, and cleanup() clears the timer.
      options.stopWaiting?.(stop);
    });
  }

  /** False when nobody waits for this id any more (aborted, timed out, or never ours). */
  settle(response: JsonRpcResponse): boolean {
    const entry = response.id === null ? undefined : this.entries.get(response.id);
    entry?.resolve(response);
    return entry !== undefined;
  }

  fail(id: JsonRpcId, error: UpstreamError): void {
    this.entries.get(id)?.reject(error);
  }

  failAll(error: UpstreamError): void {
    for (const entry of [...this.entries.values()]) entry.reject(error);
  }

  private expire(id: JsonRpcId, options: WaitOptions): void {
    const message = `upstream '${this.upstreamName}' did not answer ${options.method} (id ${id}) within ${options.timeoutMs} ms`;
    this.fail(id, new UpstreamError(message, "timeout"));
    options.onTimeout?.();
  }

  /** Aborting only stops waiting (connector contract): reason "closed", the caller's reason as cause. */
  private abortError(id: JsonRpcId, method: string, cause: unknown): UpstreamError {
    const error = new UpstreamError(`stopped waiting for ${method} (id ${id}) to upstream '${this.upstreamName}': aborted by the caller`, "closed");
    return Object.assign(error, { cause });
  }
}
