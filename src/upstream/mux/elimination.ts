import type { Logger } from "../../observability/logger.js";

/** How long a question may wait for the other calls on its process to end (docs/operations/isolation.md). */
export const HOLD_MS = 30_000;

/** A question held until one call of those in flight when it came can have asked it. */
interface Held<C> {
  readonly candidates: Set<C>;
  readonly settle: (call: C | undefined) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Attribution by elimination, for a process that runs several calls at once (the quiet lane of
 * `isolation: pool`): a question that comes while several calls are in flight is held; each
 * call that ends is struck off, since a handler that answered its call has stopped asking; when
 * one call is left, the question is its. It is given up (answered as cancelled, never shown) when
 * no call is left, when the hold runs out, or when a call ended on taskgate's side while its
 * handler may still run (cancelled, timed out): that call could have asked anything since.
 */
export class Elimination<C> {
  private readonly held = new Set<Held<C>>();

  constructor(
    private readonly logger: Logger,
    private readonly holdMs = HOLD_MS,
  ) {}

  /** The call that asked, once the others in flight have ended; undefined when it cannot be told. */
  hold(method: string, inFlight: Iterable<C>): Promise<C | undefined> {
    return new Promise<C | undefined>((resolve) => {
      const candidates = new Set(inFlight);
      const entry: Held<C> = {
        candidates,
        settle: (call) => {
          clearTimeout(entry.timer);
          this.held.delete(entry);
          resolve(call);
        },
        timer: setTimeout(() => {
          this.logger.warn(
            { method, callsInFlight: candidates.size, holdMs: this.holdMs },
            "a server-to-client request on the quiet lane could not be tied to one call before the hold ran out (several calls asked at once, or one never ended); answered as cancelled",
          );
          entry.settle(undefined);
        }, this.holdMs),
      };
      entry.timer.unref();
      this.held.add(entry);
      this.logger.info(
        { method, callsInFlight: candidates.size },
        "a server-to-client request on the quiet lane is held until one call is left that can have asked it",
      );
    });
  }

  /** A call ended with its handler's answer: it asked none of the held questions. */
  ended(call: C): void {
    if (this.held.size === 0) return;
    for (const entry of [...this.held]) {
      if (!entry.candidates.delete(call) || entry.candidates.size > 1) continue;
      entry.settle(entry.candidates.values().next().value);
    }
  }

  /** Nothing held can be tied to a call any more: every held question is given up. */
  giveUp(): void {
    for (const entry of [...this.held]) entry.settle(undefined);
  }
}
