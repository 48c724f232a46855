import type { Logger } from "../observability/logger.js";
import { backoffDelayMs } from "../util/backoff.js";

/**
 * Exponential backoff with a little jitter: replicas that lost the same upstream at the same moment
 * should not all come back in the same millisecond.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  next(): number {
    const base = backoffDelayMs(++this.attempt, this.initialMs, this.maxMs);
    return Math.round(base * (0.8 + Math.random() * 0.2));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks why it woke up). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs `attempt` again and again, with backoff between tries, until one succeeds or `stop()`.
 * One loop at a time: `kick()` while a loop runs is a no-op, so every failure path may call it.
 */
export class RetryLoop {
  private running = false;
  /** A failure reported while an attempt ran: that attempt's success may already be stale. */
  private kickedDuringAttempt = false;
  private readonly stopped = new AbortController();

  constructor(
    private readonly attempt: () => Promise<void>,
    readonly backoff: Backoff,
    private readonly logger: Logger,
  ) {}

  kick(): void {
    if (this.stopped.signal.aborted) return;
    if (this.running) {
      this.kickedDuringAttempt = true;
      return;
    }
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.stopped.abort();
  }

  private async loop(): Promise<void> {
    while (!this.stopped.signal.aborted) {
      const delayMs = this.backoff.next();
      this.logger.info({ delayMs }, "reconnecting to upstream");
      await pause(delayMs, this.stopped.signal);
      if (this.stopped.signal.aborted) break;
      this.kickedDuringAttempt = false;
      if ((await this.tryOnce()) && !this.kickedDuringAttempt) break;
    }
    this.running = false;
  }

  private async tryOnce(): Promise<boolean> {
    try {
      await this.attempt();
      return true;
    } catch (err) {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "upstream still not available");
      return false;
    }
  }
}
