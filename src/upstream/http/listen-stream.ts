import { Backoff, pause } from "../backoff.js";
import type { UpstreamResponse } from "./client.js";
import type { ResponseBody } from "./exchange.js";
import { isConnectFailure } from "./errors.js";
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
  private markOpened: () => void = () => undefined;
  /**
   * Settles once the first GET was answered (the stream is open, or the upstream offers none) or
   * could not be made. A server that asks outside any request (the SDK's `server.elicitInput`)
   * writes to this stream only while it is open: without an event store, what it sends before is lost.
   */
  readonly opened = new Promise<void>((resolve) => (this.markOpened = resolve));

  constructor(private readonly link: HttpLink) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped.abort();
    this.markOpened();
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
    let response: UpstreamResponse;
    try {
      response = await this.link.client.get(this.link.url, this.link.headers(extra), signal);
    } catch (err) {
      this.markOpened();
      if (signal.aborted) return "stop";
      // A connection that was made and then broke is only this stream's end: open it again.
      if (!isConnectFailure(err)) return "retry";
      this.link.hooks.unreachable(this.link.unreachable(err));
      return "stop";
    }
    this.markOpened();
    if (response.status === 405) return this.end(response, "the upstream offers no GET stream (405)");
    if (response.status === 404 && sessionId !== undefined) {
      void this.link.hooks.sessionLost(sessionId).catch(() => undefined);
      return this.end(response, "the upstream forgot the session (404)");
    }
    if (!response.ok) {
      this.link.logger.warn({ status: response.status }, "upstream GET stream refused; retrying");
      await response.discard();
      return "retry";
    }
    return this.read(response.body);
  }

  private async read(body: ResponseBody): Promise<"delivered" | "retry"> {
    let events = 0;
    await readSse(body, this.link.config.maxMessageBytes, {
      onData: (data) => (events++, this.link.deliver(data)),
      onEventId: (id) => (this.lastEventId = id),
      onRetry: () => undefined,
    }).catch((err: unknown) => this.link.logger.debug({ err: this.link.redact(String(err)) }, "upstream GET stream broke"));
    if (events > 0) this.backoff.reset();
    return events > 0 ? "delivered" : "retry";
  }

  private async end(response: UpstreamResponse, why: string): Promise<"stop"> {
    this.link.logger.debug(why);
    await response.discard();
    return "stop";
  }
}
