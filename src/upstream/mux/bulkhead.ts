/**
 * The most calls one upstream runs at once ("a bulkhead for legacy servers"): calls
 * beyond it wait in a FIFO queue, each told how many are ahead of it as the queue moves, for at
 * most `queueTimeoutMs`. A call that leaves the queue before its turn (cancelled) never starts.
 */
export interface BulkheadObserver {
  /** Seconds a call waited, once it starts or gives up. */
  waited(seconds: number): void;
}

/** One call's place: `ready` settles when it may start (or rejects: timed out, left). */
export interface Ticket {
  readonly ready: Promise<void>;
  /** Let in: running (`ready` has settled, or was settled from the start). */
  readonly started: boolean;
  /** Done (or no longer wanted): frees the slot, or the place in the queue. Idempotent. */
  leave(): void;
  /** Leaves the queue if still in it (`ready` rejects with LeftQueueError); false once started. */
  withdraw(): boolean;
}

export class QueueTimeoutError extends Error {
  constructor(upstream: string, timeoutMs: number, limit: number) {
    super(`upstream '${upstream}' is busy: ${limit} calls were in flight and this one waited ${timeoutMs} ms (queueTimeoutMs) without a free slot`);
    this.name = "QueueTimeoutError";
  }
}

export class LeftQueueError extends Error {
  constructor() {
    super("left the queue before it started");
    this.name = "LeftQueueError";
  }
}

/** A call's place: `ready` settles once, when it starts, times out or leaves the queue. */
class Place implements Ticket {
  readonly ready: Promise<void>;
  start!: () => void;
  fail!: (err: Error) => void;
  /** When it entered the queue (performance.now()); 0 for a call that started at once. */
  readonly since: number;
  started: boolean;
  private left = false;

  constructor(
    private readonly bulkhead: Bulkhead,
    readonly onAhead: ((ahead: number) => void) | undefined,
    queued: boolean,
  ) {
    this.started = !queued;
    this.since = queued ? performance.now() : 0;
    this.ready = queued ? new Promise<void>((start, fail) => ((this.start = start), (this.fail = fail))) : RESOLVED;
    // Nobody may await a ticket that is left at once: its rejection is not an unhandled one.
    if (queued) this.ready.catch(() => undefined);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    if (this.started) this.bulkhead.release();
    else this.withdraw();
  }

  withdraw(): boolean {
    return !this.started && this.bulkhead.drop(this, new LeftQueueError());
  }
}

const RESOLVED = Promise.resolve();

/**
 * One timer for the whole queue, not one per waiting call: every call waits at most the same
 * `queueTimeoutMs`, so the head of the queue is always the first to run out.
 */
export class Bulkhead {
  private running = 0;
  private readonly queue: Place[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly upstream: string,
    readonly limit: number,
    private readonly queueTimeoutMs: number,
    private readonly observer?: BulkheadObserver,
  ) {}

  /** Calls waiting for a slot right now. */
  get queued(): number {
    return this.queue.length;
  }

  get inFlight(): number {
    return this.running;
  }

  /** `onAhead`: told how many wait before this call, now and whenever that changes, while it waits. */
  enter(onAhead?: (ahead: number) => void): Ticket {
    if (this.running < this.limit && this.queue.length === 0) {
      this.running++;
      this.observer?.waited(0);
      return new Place(this, undefined, false);
    }
    const place = new Place(this, onAhead, true);
    this.queue.push(place);
    if (this.queue.length === 1) this.arm();
    onAhead?.(this.queue.length - 1);
    return place;
  }

  /** @internal A started call is done: its slot passes straight to the next call, or is freed. */
  release(): void {
    const next = this.queue.shift();
    if (!next) {
      this.running--;
      return;
    }
    // The slot passes straight to the next call: `running` stays as it is.
    this.waited(next);
    next.started = true;
    next.start();
    this.arm();
    this.tellPositions();
  }

  /** @internal Out of the queue before its turn (timed out, left); false when it is not queued. */
  drop(place: Place, err: Error): boolean {
    const at = this.queue.indexOf(place);
    if (at === -1) return false;
    this.queue.splice(at, 1);
    this.waited(place);
    place.fail(err);
    if (at === 0) this.arm();
    this.tellPositions(at);
    return true;
  }

  /** The timer follows the head of the queue: its deadline, or none when the queue is empty. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const head = this.queue[0];
    if (!head) return;
    const dueInMs = Math.max(0, head.since + this.queueTimeoutMs - performance.now());
    this.timer = setTimeout(() => this.expire(), dueInMs);
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    // Every call that has waited its full time goes, oldest first; arm() then follows the new head.
    while (this.queue[0] && now - this.queue[0].since >= this.queueTimeoutMs - 1) {
      this.drop(this.queue[0], new QueueTimeoutError(this.upstream, this.queueTimeoutMs, this.limit));
    }
    this.arm();
  }

  private waited(place: Place): void {
    this.observer?.waited((performance.now() - place.since) / 1000);
  }

  /** Only those behind a change moved. */
  private tellPositions(from = 0): void {
    for (let i = from; i < this.queue.length; i++) this.queue[i]!.onAhead?.(i);
  }
}
