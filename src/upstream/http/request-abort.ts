/**
 * The abort of one upstream HTTP request, lighter than an AbortController: the one exchange it
 * ends listens by a callback, and a web AbortSignal is made only when something asks for one
 * (resuming the request's stream). On Node 20 each AbortSignal made per call kept the call's
 * objects alive through two scavenges (docs/contributing/performance.md#an-abortsignal-per-call);
 * Node 22 and 24 do not.
 */
export class RequestAbort {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;
  private listener: (() => void) | undefined;

  /** The exchange this ends (one at a time); undefined when it is over. */
  listen(listener: (() => void) | undefined): void {
    this.listener = listener;
  }

  /** As AbortController.abort: once, with an AbortError DOMException when no reason is given. */
  abort(reason: unknown = new DOMException("This operation was aborted", "AbortError")): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.listener?.();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}
