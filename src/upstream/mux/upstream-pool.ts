import type { Logger } from "../../observability/logger.js";
import { Backoff } from "../backoff.js";
import type { UpstreamConnector } from "../connector.js";
import { GrowthRule, STALL_MS } from "./pool-growth.js";
import { started, type PoolMember, type PoolOptions, type PoolState } from "./pool-member.js";

export type { PoolMember, PoolOptions, PoolState } from "./pool-member.js";

/** A call waiting for a process to come back (pool). */
interface Waiting<M> {
  resolve(member: M): void;
  reject(err: Error): void;
  since: number;
}

/** How a pool makes its members: a new connector (a process, or an HTTP session) and the words for it. */
export interface PoolSource {
  /**
   * A connector not yet started: a stdio process, or a session of an HTTP upstream. `capabilities`:
   * what its `initialize` declares (its callers' profile, profiles.ts); taskgate's own when absent.
   */
  connect(logger: Logger, id: number, capabilities?: Record<string, unknown>): UpstreamConnector;
  /** What a member is, for logs and errors: "process" (stdio) or "session" (HTTP). */
  unit: "process" | "session";
  /**
   * Members may start several at once, one for each call that waits stalled (HTTP sessions: an
   * `initialize` and a GET each, milliseconds); otherwise one at a time (stdio processes: a spawn,
   * a cold JIT and tens of MiB each, where calls that come back meanwhile may make the next needless).
   */
  startsTogether: boolean;
  /** Delays between attempts after a member could not start. */
  retryInitialMs: number;
  retryMaxMs: number;
}

/** What the pools of one upstream's caller profiles share (profiles.ts): the member numbering and the bound. */
export interface SharedBound {
  /** A number no other member of the upstream has: its relay mints question ids with it. */
  nextId(): number;
  /** Whether one more member fits within the upstream's poolSize, all profiles counted. */
  room(): boolean;
  /** room(), after ending an idle member of another profile if need be: for calls that wait, never to keep members warm. */
  makeRoom(): boolean;
}

/**
 * Initialized upstream connections for the calls of one upstream (`isolation: pool` and
 * `per-call`): stdio processes, or sessions of an HTTP upstream, each with its own session id and
 * GET stream. Each runs one call at a time, so everything it asks, on whatever stream, belongs to
 * that call. A member comes back after a clean end and is ended (the stdio kill ladder; DELETE of
 * the HTTP session) after any other: its handler may still run and ask. `create` attaches the
 * member's listener before it starts, so what it says right at start (a roots/list) is heard.
 * Spawning, connecting and ending stay in the connectors; the callers above bound how many are
 * taken at once. Calls that wait for a member share one timer and one queue; when the pool grows
 * is `GrowthRule`'s (pool-growth.ts).
 */
export class UpstreamPool<M extends PoolMember> {
  private readonly idle: M[] = [];
  private readonly starting = new Set<Promise<void>>();
  /** Calls waiting for a process to come back (pool), first come first served. */
  private readonly handoff: Waiting<M>[] = [];
  private readonly backoff: Backoff;
  private readonly growth = new GrowthRule();
  private stallTimer: NodeJS.Timeout | undefined;
  /** Processes out with a call. */
  private out = 0;
  /** Processes being started for calls that wait (not warm ones). */
  private growing = 0;
  /** per-call: calls in take() that have no process yet. */
  private waiting = 0;
  private stopping = 0;
  private next = 0;
  private closed = false;
  private everUp = false;
  /** Members kept ready; 0 once the pool gave way to another profile's (coolDown). */
  private warm: number;

  constructor(
    readonly name: string,
    private readonly source: PoolSource,
    private readonly options: PoolOptions,
    private readonly logger: Logger,
    private readonly create: (connector: UpstreamConnector, id: number) => M,
    private readonly shared?: SharedBound,
  ) {
    this.backoff = new Backoff(source.retryInitialMs, source.retryMaxMs);
    this.warm = options.warm;
  }

  /** Members of this pool, whatever their state but stopping. */
  get members(): number {
    return this.out + this.idle.length + this.starting.size + this.growing;
  }

  /** Has an idle member (a call taking one now would not wait). */
  get hasIdle(): boolean {
    return this.idle.length > 0;
  }

  /**
   * Gives way to another profile's pool: keeps no member ready from now on and ends one idle
   * member, if it has one (true then).
   */
  coolDown(): boolean {
    this.warm = 0;
    const member = this.idle.shift();
    if (!member) return false;
    this.retire(member);
    return true;
  }

  /** Fill the warm processes in the background; failures are logged and retried with backoff. */
  start(): void {
    this.refill();
  }

  /** An idle initialized process at once, or undefined: the common case, with no promise made. */
  takeIdle(): M | undefined {
    const member = this.readyOne();
    if (member) this.out++;
    if (!this.options.reuse) this.refill();
    return member;
  }

  /**
   * An initialized process for one call: an idle one; else (pool) the next one given back or
   * started for the waiting calls (GrowthRule); else (per-call) one warming up when no other call
   * waits for it, or one started for this call.
   */
  take(): Promise<M> {
    const member = this.takeIdle();
    if (member) return Promise.resolve(member);
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.options.reuse) return this.takeFresh();
    return new Promise<M>((resolve, reject) => {
      this.handoff.push({ resolve, reject, since: performance.now() });
      this.armStall();
      // An idle process found dead was retired above: its replacement starts now, for this call.
      this.refill();
    });
  }

  /**
   * The call is over: `clean` (its handler answered) may reuse the process; otherwise it is ended.
   * `keepSession`: an HTTP session another replica resumes a call in is let go without DELETE.
   */
  give(member: M, clean: boolean, keepSession = false): void {
    this.out--;
    const reusable = clean && this.options.reuse && !this.closed && member.connector.isReady();
    if (reusable) {
      const crowded = this.growth.returned(performance.now(), this.handoff.length, this.out + 1);
      this.arrive(member);
      if (crowded && this.idle.length === 0 && this.canGrow()) this.grow(false);
    } else {
      this.retire(member, keepSession);
      // A call waiting for a process gets a new one now rather than after STALL_MS.
      if (this.handoff.length > 0 && this.canGrow()) this.grow(true);
    }
    this.refill();
  }

  /** Once a process of the pool first came up (readiness). */
  get warmed(): boolean {
    return this.everUp;
  }

  /** Processes by state, for the pool gauge. */
  counts(): Record<PoolState, number> {
    return { idle: this.idle.length, busy: this.out, starting: this.starting.size + this.growing, stopping: this.stopping };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.stallTimer);
    for (const waiter of this.handoff.splice(0)) waiter.reject(this.closedError());
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled(this.idle.splice(0).map((m) => m.connector.close()));
  }

  /** A ready process goes to the call that waited longest, else to the idle ones. */
  private arrive(member: M): void {
    const next = this.handoff.shift();
    if (!next) return void this.idle.push(member);
    this.out++;
    next.resolve(member);
    this.armStall();
  }

  /** One timer for all waiting calls: it follows the longest-waiting one (STALL_MS). */
  private armStall(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    const head = this.handoff[0];
    if (!head || this.closed) return;
    // Stalled already (a process is starting, or the pool is full): look again a while later.
    const dueInMs = this.growth.stallDueInMs(performance.now(), head.since) || STALL_MS;
    this.stallTimer = setTimeout(() => this.onStall(), dueInMs);
    this.stallTimer.unref();
  }

  private onStall(): void {
    const now = performance.now();
    // Processes one at a time: calls that come back meanwhile may make the next one needless.
    // Sessions one for each stalled call, so a burst of slow calls is not started one by one.
    const stalled = this.source.startsTogether ? this.handoff.filter((w) => this.growth.stallDueInMs(now, w.since) === 0).length : 1;
    const head = this.handoff[0];
    if (head && this.growth.stallDueInMs(now, head.since) === 0) while (this.growing < stalled && this.canGrow()) this.grow(true);
    this.armStall();
  }

  private canGrow(): boolean {
    const total = this.out + this.idle.length + this.starting.size + this.growing;
    const alone = this.source.startsTogether || (this.growing === 0 && this.starting.size === 0);
    return !this.closed && alone && total < this.options.size && (this.shared?.makeRoom() ?? true);
  }

  /**
   * A process started for the waiting calls; the first in line gets it (or one given back
   * meanwhile). `stalled`: when it cannot start, the call that waited longest fails with why, as a
   * call does that cannot get a process; a crowded pool's growth only logs it.
   */
  private grow(stalled: boolean): void {
    this.growth.grew();
    this.growing++;
    const member = this.member();
    started(member.connector).then(
      () => {
        this.growing--;
        this.everUp = true;
        if (this.closed) void member.connector.close();
        else this.arrive(member);
      },
      async (err: unknown) => {
        this.growing--;
        await member.connector.close();
        this.logger.warn({ err: String((err as Error).message ?? err) }, `could not start one more pooled upstream ${this.source.unit}`);
        this.startFailed(err, stalled);
      },
    );
  }

  /**
   * A process could not start: with none out to come back, every waiting call fails with why (a
   * call that cannot get a process does not wait on); else the one it was started for, if any.
   */
  private startFailed(err: unknown, stalled: boolean): void {
    const error = err instanceof Error ? err : new Error(String(err));
    const failing = this.out === 0 ? this.handoff.splice(0) : stalled ? this.handoff.splice(0, 1) : [];
    for (const waiter of failing) waiter.reject(error);
    this.armStall();
  }

  /** per-call: a process warming up when no other call waits for it, else one started for this call. */
  private async takeFresh(): Promise<M> {
    this.waiting++;
    try {
      const member = (await this.warming()) ?? (await this.fresh());
      this.out++;
      return member;
    } finally {
      this.waiting--;
      this.refill();
    }
  }

  /** Waited for once only: a process that cannot start makes this call fail, not wait on. */
  private async warming(): Promise<M | undefined> {
    if (this.starting.size < this.waiting) return undefined;
    await Promise.race(this.starting);
    return this.readyOne();
  }

  private readyOne(): M | undefined {
    let member = this.idle.pop();
    while (member && !member.connector.isReady()) {
      this.retire(member);
      member = this.idle.pop();
    }
    return member;
  }

  private async fresh(): Promise<M> {
    if (this.closed) throw this.closedError();
    const member = this.member();
    this.growing++;
    try {
      await started(member.connector);
      this.everUp = true;
      return member;
    } catch (err) {
      await member.connector.close();
      throw err;
    } finally {
      this.growing--;
    }
  }

  private closedError(): Error {
    return new Error(`the ${this.source.unit} pool of upstream '${this.name}' is closed`);
  }

  /** Ended in the background: stdin closed, `shutdownGraceMs`, SIGTERM, then SIGKILL (stdio); DELETE of the session (HTTP). */
  private retire(member: M, keepSession = false): void {
    this.stopping++;
    void member.connector
      .close(keepSession ? { keepSession } : undefined)
      .catch((err: unknown) => this.logger.warn({ err: String(err) }, `could not stop a pooled upstream ${this.source.unit}`))
      .finally(() => this.stopping--);
  }

  /**
   * pool: keeps `warm` processes in all (a busy one counts: it comes back); per-call: keeps `warm`
   * idle ones ready, since each call uses one up. Never beyond `size`.
   */
  private refill(): void {
    const { size, reuse } = this.options;
    const warm = this.warm;
    const total = () => this.out + this.idle.length + this.starting.size + this.growing;
    const short = () => (reuse ? total() < warm : this.idle.length + this.starting.size < warm);
    const room = () => this.shared?.room() ?? true;
    while (!this.closed && short() && total() < size && room()) {
      const warming: Promise<void> = this.warmOne().finally(() => {
        this.starting.delete(warming);
        this.refill();
      });
      this.starting.add(warming);
    }
  }

  private async warmOne(): Promise<void> {
    const member = this.member();
    try {
      await started(member.connector);
      this.everUp = true;
      this.backoff.reset();
      if (this.closed) await member.connector.close();
      else if (this.options.reuse) this.arrive(member);
      else this.idle.push(member);
    } catch (err) {
      await member.connector.close();
      const delayMs = this.backoff.next();
      this.logger.warn({ err: String((err as Error).message ?? err), retryInMs: delayMs }, `could not start a pooled upstream ${this.source.unit}`);
      if (this.options.reuse) this.startFailed(err, false);
      // The pool refills once this attempt is over (see refill), after the backoff.
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
    }
  }

  private member(): M {
    const id = this.shared ? this.shared.nextId() : ++this.next;
    return this.create(this.source.connect(this.logger.child({ [this.source.unit]: id }), id), id);
  }
}
