import { Backoff, pause } from "../backoff.js";
import { unreachable } from "./errors.js";
import type { HttpLink } from "./link.js";
import { readSse } from "./sse.js";

const RECONNECT_INITIAL_MS = 200;
const RECONNECT_MAX_MS = 10_000;

/**
 * The optional GET stream of one upstream session: what the upstream sends there belongs to no
 * request (no `relatedTo`). Reconnected with backoff while the session lasts; 405 means the
 * upstream offers none, which is fine. A lost session or an unreachable upstream is the
 * connector's business, which then opens a new one of these for the new session.
 */
export class ListenStream {
  private readonly stopped = new AbortController();
  private readonly backoff = new Backoff(RECONNECT_INITIAL_MS, RECONNECT_MAX_MS);
  private lastEventId: string | undefined;

  constructor(private readonly link: HttpLink) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped.abort();
  }

  private async run(): Promise<void> {
    const { signal } = this.stopped;
    while (!signal.aborted) {
      const outcome = await this.once(signal);
      if (outcome === "stop" || signal.aborted) return;
      await pause(outcome === "delivered" ? RECONNECT_INITIAL_MS : this.backoff.next(), signal);
    }
  }

  /** One connection: "delivered" when it carried events, "retry" when it did not, or "stop". */
  private async once(signal: AbortSignal): Promise<"delivered" | "retry" | "stop"> {
    const sessionId = this.link.sessionId;
    const extra: Record<string, string> = { accept: "text/event-stream" };
    if (this.lastEventId !== undefined) extra["last-event-id"] = this.lastEventId;
    let response: Response;
    try {
      response = await fetch(this.link.config.url, { method: "GET", headers: this.link.headers(extra), signal });
    } catch (err) {
      if (!signal.aborted) this.link.hooks.unreachable(unreachable(this.link.name, this.link.config.url, err));
      return "stop";
    }
    if (response.status === 405) return this.end(response, "the upstream offers no GET stream (405)");
    if (response.status === 404 && sessionId !== undefined) {
      void this.link.hooks.sessionLost(sessionId).catch(() => undefined);
      return this.end(response, "the upstream forgot the session (404)");
    }
    if (!response.ok || !response.body) {
      this.link.logger.warn({ status: response.status }, "upstream GET stream refused; retrying");
      await response.body?.cancel().catch(() => undefined);
      return "retry";
    }
    return this.read(response.body);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<"delivered" | "retry"> {
    let events = 0;
    await readSse(body, this.link.config.maxMessageBytes, {
      onData: (data) => (events++, this.link.deliver(data)),
      onEventId: (id) => (this.lastEventId = id),
      onRetry: () => undefined,
    }).catch((err: unknown) => this.link.logger.debug({ err: String(err) }, "upstream GET stream broke"));
    if (events > 0) this.backoff.reset();
    return events > 0 ? "delivered" : "retry";
  }

  private async end(response: Response, why: string): Promise<"stop"> {
    this.link.logger.debug(why);
    // A 404 renews the session, which stops this stream at once: its body is then already
    // aborted, and cancelling it rejects. Unhandled, that rejection would end the process.
    await response.body?.cancel().catch(() => undefined);
    return "stop";
  }
}
