import type { QueueWait } from "../caller.js";

/**
 * The most calls one upstream runs at once ("a bulkhead for legacy servers"): calls beyond it
 * wait in a queue that takes turns by principal, first come first served within each
 * (docs/operations/isolation.md, the bulkhead). A plain call waits at most `queueTimeoutMs`: a
 * client holds a connection for it. A task waits until shortly before its TTL runs out (QueueWait).
 * A call that leaves the queue before its turn (cancelled) never starts.
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
  /** When it began to wait (performance.now()); 0 for a call let in at once. */
  readonly since: number;
  /** Done (or no longer wanted): frees the slot, or the place in the queue. Idempotent. */
  leave(): void;
  /** Leaves the queue if still in it (`ready` rejects with LeftQueueError); false once started. `moved`: it waits on in another queue (not counted as a wait here). */
  withdraw(moved?: boolean): boolean;
}

/** What a call brings to the queue. */
export interface Entry {
  /** Told how many calls start before this one: at once, then as the queue moves (coarsely: see Place.tell). */
  onAhead?: ((ahead: number) => void) | undefined;
  /** Whose turn it is: calls of one principal wait behind each other, not behind another's batch. */
  principal?: string | undefined;
  /** Set for a call that is (or may become) a task: how long it may wait. */
  wait?: QueueWait | undefined;
  /** When it began to wait, when it waited in another queue first (moved): its wait is counted, and bounded, from then. */
  since?: number | undefined;
}

export class QueueTimeoutError extends Error {
  constructor(upstream: string, timeoutMs: number, limit: number) {
    super(`upstream '${upstream}' is busy: ${limit} calls were in flight and this one waited ${timeoutMs} ms (queueTimeoutMs) without a free slot`);
    this.name = "QueueTimeoutError";
  }
}

/** A task's queue wait ran into its TTL. */
export class QueueTtlError extends Error {
  constructor(upstream: string, waitedMs: number, limit: number, ttlMs: number) {
    super(
      `upstream '${upstream}' is busy: ${limit} calls were in flight the whole time this task waited for a slot (${Math.round(waitedMs / 1000)} s); it stopped waiting before its TTL (${ttlMs} ms) ran out`,
    );
    this.name = "QueueTtlError";
  }
}

export class LeftQueueError extends Error {
  constructor() {
    super("left the queue before it started");
    this.name = "LeftQueueError";
  }
}

/** How often the queue looks at its tasks' deadlines and tells places that moved: about once a second. */
export const QUEUE_TICK_MS = 1_000;
/** Principals beyond this make a new place's first count an upper bound (the whole queue); the next tick makes it exact. */
const EXACT_ENTER_PRINCIPALS = 256;
const DEFAULT_PRINCIPAL = "";

/** A call's place: `ready` settles once, when it starts, times out or leaves the queue. */
class Place implements Ticket {
  readonly ready: Promise<void>;
  start!: () => void;
  fail!: (err: Error) => void;
  /** When it entered the queue (performance.now()); 0 for a call that started at once. */
  readonly since: number;
  started: boolean;
  private left = false;
  /** The count last told (-1: none yet). */
  told = -1;

  constructor(
    private readonly bulkhead: Bulkhead,
    readonly principal: string,
    readonly onAhead: ((ahead: number) => void) | undefined,
    readonly wait: QueueWait | undefined,
    queued: boolean,
    since: number | undefined,
  ) {
    this.started = !queued;
    this.since = queued ? (since ?? performance.now()) : 0;
    this.ready = queued ? new Promise<void>((start, fail) => ((this.start = start), (this.fail = fail))) : RESOLVED;
    // Nobody may await a ticket that is left at once: its rejection is not an unhandled one.
    if (queued) this.ready.catch(() => undefined);
  }

  /** A task waits until its QueueWait says; a plain call, queueTimeoutMs. */
  get isTask(): boolean {
    return this.wait?.until !== undefined;
  }

  /**
   * Told only a change worth a status write: every count under 10, and beyond that a move of a
   * fifth or more, so a task waiting behind N others is told about 2·log(N) times, not N
   * (each telling of a task is a store write).
   */
  tell(ahead: number): void {
    const last = this.told;
    if (!this.onAhead || ahead === last) return;
    if (last >= 0 && ahead >= 10 && Math.abs(ahead - last) * 5 < last) return;
    this.told = ahead;
    this.onAhead(ahead);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    if (this.started) this.bulkhead.release();
    else this.withdraw();
  }

  withdraw(moved = false): boolean {
    return !this.started && this.bulkhead.drop(this, new LeftQueueError(), moved);
  }
}

const RESOLVED = Promise.resolve();

/**
 * Turns go round the principals that wait, in the order they began to wait; each turn starts the
 * oldest call of that principal, who then goes to the back. One principal's batch of 500 thus
 * delays another's single call by at most one turn. Plain calls time out with one timer that
 * follows the oldest of them (all wait the same `queueTimeoutMs`); tasks are looked at once a
 * tick, as are the counts told to the places that moved.
 */
export class Bulkhead {
  private running = 0;
  /** Waiting calls by principal; the Map's order is the order of turns. */
  private readonly lanes = new Map<string, Place[]>();
  /** Plain calls waiting, oldest first. */
  private readonly plain: Place[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  /** The queue moved since the counts were last told. */
  private moved = false;

  constructor(
    readonly upstream: string,
    readonly limit: number,
    private readonly queueTimeoutMs: number,
    private readonly observer?: BulkheadObserver,
  ) {}

  /** Calls waiting for a slot right now. */
  get queued(): number {
    return this.count;
  }

  get inFlight(): number {
    return this.running;
  }

  /** Principals with calls waiting right now. */
  get waitingPrincipals(): number {
    return this.lanes.size;
  }

  /** A place for one call: started at once when a slot is free and nobody waits; else queued. `onAhead` for compatibility. */
  enter(entry: Entry | ((ahead: number) => void) = {}): Ticket {
    const { onAhead, principal = DEFAULT_PRINCIPAL, wait, since } = typeof entry === "function" ? { onAhead: entry } : entry;
    if (this.running < this.limit && this.count === 0) {
      this.running++;
      this.observer?.waited(since === undefined ? 0 : (performance.now() - since) / 1000);
      return new Place(this, principal, undefined, undefined, false, undefined);
    }
    const place = new Place(this, principal, onAhead, wait, true, since);
    const first = this.lanes.get(principal);
    const lane = first ?? [];
    if (!first) this.lanes.set(principal, lane);
    lane.push(place);
    this.count++;
    if (place.isTask) this.watchTicker();
    else this.addPlain(place);
    wait?.watch(() => this.becameTask(place));
    place.tell(this.aheadOfNew(place, lane.length - 1));
    return place;
  }

  /** @internal A started call is done: its slot passes straight to the next call in turn, or is freed. */
  release(): void {
    const next = this.nextInTurn();
    if (!next) {
      this.running--;
      return;
    }
    // The slot passes straight to the next call: `running` stays as it is.
    this.waited(next);
    next.started = true;
    next.wait?.watch(undefined);
    next.start();
    if (!next.isTask) this.removePlain(next);
    this.afterMove();
  }

  /** @internal Out of the queue before its turn (timed out, left); false when it is not queued. */
  drop(place: Place, err: Error, moved = false): boolean {
    const lane = this.lanes.get(place.principal);
    const at = lane ? lane.indexOf(place) : -1;
    if (!lane || at === -1) return false;
    lane.splice(at, 1);
    if (lane.length === 0) this.lanes.delete(place.principal);
    this.count--;
    if (!place.isTask) this.removePlain(place);
    place.wait?.watch(undefined);
    if (!moved) this.waited(place);
    place.fail(err);
    this.afterMove();
    return true;
  }

  /** The oldest call of the principal whose turn it is; that principal goes to the back. */
  private nextInTurn(): Place | undefined {
    for (const [principal, lane] of this.lanes) {
      const place = lane.shift() as Place;
      this.lanes.delete(principal);
      if (lane.length > 0) this.lanes.set(principal, lane);
      this.count--;
      return place;
    }
    return undefined;
  }

  /** A plain call that waited became a task: from now on its TTL bounds its wait. */
  private becameTask(place: Place): void {
    if (place.started) return;
    this.removePlain(place);
    this.watchTicker();
  }

  private addPlain(place: Place): void {
    this.plain.push(place);
    if (this.plain.length === 1) this.arm();
  }

  private removePlain(place: Place): void {
    const at = this.plain.indexOf(place);
    if (at === -1) return;
    this.plain.splice(at, 1);
    if (at === 0) this.arm();
  }

  private afterMove(): void {
    this.moved = true;
    if (this.count === 0) this.stopTicker();
    else this.watchTicker();
  }

  /** The timer follows the oldest plain call: its deadline, or none when none waits. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const head = this.plain[0];
    if (!head) return;
    const dueInMs = Math.max(0, head.since + this.queueTimeoutMs - performance.now());
    this.timer = setTimeout(() => this.expire(), dueInMs);
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    // Every plain call that has waited its full time goes, oldest first; arm() then follows the new head.
    while (this.plain[0] && now - this.plain[0].since >= this.queueTimeoutMs - 1) {
      this.drop(this.plain[0], new QueueTimeoutError(this.upstream, this.queueTimeoutMs, this.limit));
    }
    this.arm();
  }

  private watchTicker(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => this.tick(), QUEUE_TICK_MS);
    this.ticker.unref();
  }

  private stopTicker(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /** Tasks whose wait ran into their TTL go, saying so; then every place that moved is told its count. */
  private tick(): void {
    const now = performance.now();
    const due: Place[] = [];
    for (const lane of this.lanes.values()) for (const place of lane) if (place.isTask && now >= (place.wait?.until as number)) due.push(place);
    for (const place of due) this.drop(place, new QueueTtlError(this.upstream, now - place.since, this.limit, place.wait?.ttlMs ?? 0));
    if (this.moved) this.tellAll();
    if (this.count === 0) this.stopTicker();
  }

  /**
   * The order the queue will start its calls in, as things stand: round by round, each waiting
   * principal's next call in turn order. One pass over the queue.
   */
  private tellAll(): void {
    this.moved = false;
    let lanes = [...this.lanes.values()];
    let ahead = 0;
    for (let round = 0; lanes.length > 0; round++) {
      const still: Place[][] = [];
      for (const lane of lanes) {
        (lane[round] as Place).tell(ahead++);
        if (lane.length > round + 1) still.push(lane);
      }
      lanes = still;
    }
  }

  /**
   * How many start before a call just queued at `index` of its principal's lane: from each other
   * principal, as many as turns come before its own (one more from those ahead of it in turn).
   * With very many principals waiting, the whole queue: an upper bound the next tick corrects.
   */
  private aheadOfNew(place: Place, index: number): number {
    if (!place.onAhead) return 0;
    if (this.lanes.size > EXACT_ENTER_PRINCIPALS) {
      this.moved = true;
      return this.count - 1;
    }
    let ahead = index;
    let before = true;
    for (const [principal, lane] of this.lanes) {
      if (principal === place.principal) {
        before = false;
        continue;
      }
      ahead += Math.min(lane.length, before ? index + 1 : index);
    }
    return ahead;
  }

  private waited(place: Place): void {
    this.observer?.waited((performance.now() - place.since) / 1000);
  }
}
