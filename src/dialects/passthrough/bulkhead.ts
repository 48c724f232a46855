/**
 * The most calls one upstream runs at once (issue 14, "a bulkhead for legacy servers"): calls
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
  /** False when the call started at once (`ready` is settled): nothing to wait for. */
  readonly queued: boolean;
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

interface Waiter {
  start: () => void;
  fail: (err: Error) => void;
  onAhead?: ((ahead: number) => void) | undefined;
  timer: NodeJS.Timeout;
  since: number;
  started?: boolean;
}

const STARTED: Promise<void> = Promise.resolve();

/**
 * The ticket of a call that started at once: an object of its own rather than closures, since a
 * detached call keeps its ticket as long as the upstream runs (issue 16).
 */
class Slot implements Ticket {
  readonly ready = STARTED;
  readonly queued = false;
  private left = false;

  constructor(private readonly bulkhead: Bulkhead) {}

  leave(): void {
    if (this.left) return;
    this.left = true;
    this.bulkhead.release();
  }

  withdraw(): boolean {
    return false;
  }
}

export class Bulkhead {
  private running = 0;
  private readonly queue: Waiter[] = [];

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
      return new Slot(this);
    }
    let waiter!: Waiter;
    const ready = new Promise<void>((start, fail) => {
      const timer = setTimeout(() => this.drop(waiter, new QueueTimeoutError(this.upstream, this.queueTimeoutMs, this.limit)), this.queueTimeoutMs);
      timer.unref();
      waiter = { start, fail, onAhead, timer, since: performance.now() };
    });
    this.queue.push(waiter);
    onAhead?.(this.queue.length - 1);
    // Nobody may await a ticket that is left at once: its rejection is not an unhandled one.
    ready.catch(() => undefined);
    const withdraw = () => !waiter.started && this.drop(waiter, new LeftQueueError());
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      if (waiter.started) this.release();
      else withdraw();
    };
    return { ready, queued: true, withdraw, leave };
  }

  /** A slot ends: the next call in the queue takes it. */
  release(): void {
    const next = this.queue.shift();
    if (!next) {
      this.running--;
      return;
    }
    // The slot passes straight to the next call: `running` stays as it is.
    this.started(next);
    next.started = true;
    next.start();
    this.tellPositions();
  }

  private drop(waiter: Waiter, err: Error): boolean {
    const at = this.queue.indexOf(waiter);
    if (at === -1) return false;
    this.queue.splice(at, 1);
    this.started(waiter);
    waiter.fail(err);
    this.tellPositions(at);
    return true;
  }

  private started(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.observer?.waited((performance.now() - waiter.since) / 1000);
  }

  /** Only those behind a change moved. */
  private tellPositions(from = 0): void {
    for (let i = from; i < this.queue.length; i++) this.queue[i]!.onAhead?.(i);
  }
}
