/** One waiting thing: `due` is when it fires (performance.now()), unless it is taken out first. */
export interface Deadline {
  readonly due: number;
  readonly fire: () => void;
  /** Its place in the list, while it is in it. */
  prev: Deadline | undefined;
  next: Deadline | undefined;
  /** Fired or taken out: in the list no more. */
  done: boolean;
}

/**
 * Deadlines of one length on one unref'd timer: they fall due in the order set, so a list, oldest
 * first (why: docs/contributing/performance.md#a-timer-per-call). Bound: one entry per deadline pending.
 */
export class Deadlines {
  private head: Deadline | undefined;
  private tail: Deadline | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  /** `fire` in `ms`, unless `clear` comes first. */
  set(fire: () => void): Deadline {
    const deadline: Deadline = { due: performance.now() + this.ms, fire, prev: this.tail, next: undefined, done: false };
    if (this.tail) this.tail.next = deadline;
    else this.head = deadline;
    this.tail = deadline;
    if (this.timer === undefined) this.arm(this.ms);
    return deadline;
  }

  clear(deadline: Deadline): void {
    if (deadline.done) return;
    deadline.done = true;
    const { prev, next } = deadline;
    if (prev) prev.next = next;
    else this.head = next;
    if (next) next.prev = prev;
    else this.tail = prev;
    deadline.prev = deadline.next = undefined;
  }

  /** Deadlines set and not yet fired or cleared. */
  get size(): number {
    let n = 0;
    for (let d = this.head; d; d = d.next) n++;
    return n;
  }

  private arm(inMs: number): void {
    this.timer = setTimeout(() => this.due(), Math.max(1, Math.ceil(inMs))).unref();
  }

  /** The timer fired: every deadline now due fires, oldest first; the timer is set for the next. */
  private due(): void {
    this.timer = undefined;
    const now = performance.now();
    for (let d = this.head; d && d.due <= now; d = this.head) {
      this.clear(d);
      try {
        d.fire();
      } catch {
        // A deadline's own work fails alone; the others still fire.
      }
    }
    if (this.head) this.arm(this.head.due - now);
  }
}

const byLength = new Map<number, Deadlines>();

/**
 * The deadlines of `ms`, shared by everyone who waits that long. Keyed by a length set in code
 * or configuration (`http.sseKeepAliveMs`), never by a request: a few entries at most.
 */
export function deadlinesOf(ms: number): Deadlines {
  let deadlines = byLength.get(ms);
  if (!deadlines) byLength.set(ms, (deadlines = new Deadlines(ms)));
  return deadlines;
}
