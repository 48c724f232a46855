import { EventEmitter } from "node:events";

/**
 * The abort of one upstream HTTP request: what undici's `request` takes as its `signal` (an
 * EventEmitter with `aborted` and `reason`, https://undici.nodejs.org/#/docs/api/Dispatcher?id=parameter-requestoptions),
 * with a web AbortSignal made only when something asks for one (resuming the request's stream).
 * On Node 20 each AbortSignal made per call kept the call's objects alive through two scavenges
 * (docs/contributing/performance.md#an-abortsignal-per-call); Node 22 and 24 do not.
 */
export class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;

  /** As AbortController.abort: once, with an AbortError DOMException when no reason is given. */
  abort(reason: unknown = new DOMException("This operation was aborted", "AbortError")): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.emit("abort");
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}
