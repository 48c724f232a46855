import type { StdioUpstreamConfig } from "../../config/schema.js";
import type { Logger } from "../../observability/logger.js";
import { Backoff } from "../backoff.js";
import type { GenerationSetting } from "../negotiate.js";
import { StdioConnector } from "./stdio-connector.js";

/** What the pool holds per process: the connector, and whatever its user attached to it at birth. */
export interface PoolMember {
  readonly connector: StdioConnector;
}

export interface PoolOptions {
  /** Most processes out at once (taken by calls). */
  size: number;
  /** Initialized processes kept ready for the next calls, within `size`. */
  warm: number;
  /** Whether a process that ended its call cleanly goes back for the next one (pool) or is ended (per-call). */
  reuse: boolean;
  /** upstreams[].generation, for each process's negotiation. */
  generation?: GenerationSetting | undefined;
}

export type PoolState = "idle" | "busy" | "starting" | "stopping";

/**
 * How long no process may come back before a waiting call gets a new one. Quick calls then keep
 * reusing a few warm processes (a new one costs a spawn, an `initialize` and a cold JIT: far more
 * than a quick call), while a call beside slow ones waits only this long.
 */
const GROW_AFTER_MS = 100;

/**
 * Initialized upstream processes for the calls of one stdio upstream (`isolation: pool` and
 * `per-call`): each runs one call at a time, so everything it asks belongs to that call. A
 * process comes back after a clean end and is ended (the stdio kill ladder) after any other: its
 * handler may still run and ask. `create` attaches the member's listener before the process
 * starts, so what it says right at start (a roots/list) is heard. Spawning and killing stay in
 * the stdio connector; the callers above bound how many are taken at once.
 */
export class StdioPool<M extends PoolMember> {
  private readonly idle: M[] = [];
  private readonly starting = new Set<Promise<void>>();
  /** Calls waiting for a process to be given back (pool), first come first served. */
  private readonly handoff: Array<(member: M | undefined) => void> = [];
  private readonly backoff: Backoff;
  private busy = 0;
  /** Processes being started for a call that waited (not warm ones). */
  private growing = 0;
  /** When a process last came back clean (performance.now()): calls are moving. */
  private lastReturnAt = 0;
  /** Calls in take() that have no process yet. */
  private waiting = 0;
  private stopping = 0;
  private next = 0;
  private closed = false;
  private everUp = false;

  constructor(
    readonly name: string,
    private readonly config: StdioUpstreamConfig,
    private readonly options: PoolOptions,
    private readonly logger: Logger,
    private readonly create: (connector: StdioConnector, id: number) => M,
  ) {
    this.backoff = new Backoff(config.restartInitialDelayMs, config.restartMaxDelayMs);
  }

  /** Fill the warm processes in the background; failures are logged and retried with backoff. */
  start(): void {
    this.refill();
  }

  /**
   * An initialized process for one call: an idle one; else (pool) one another call gives back
   * within GROW_AFTER_MS; else one that is warming up, when no other call waits for it; else one
   * started for this call. The callers bound the calls (the bulkhead), so the processes stay
   * within `size`; quick calls keep reusing a few warm processes instead of growing the pool.
   */
  async take(): Promise<M> {
    this.busy++;
    this.waiting++;
    try {
      const member = this.readyOne() ?? (await this.givenBack()) ?? (await this.warming());
      return member ?? (await this.fresh());
    } catch (err) {
      this.busy--;
      throw err;
    } finally {
      this.waiting--;
      this.refill();
    }
  }

  /**
   * Waits for a process another call gives back (pool only: per-call never gives any back), as
   * long as processes keep coming back: quick calls then share a few warm processes. Only when
   * none came back for GROW_AFTER_MS (the calls in flight are slow) does the pool grow.
   */
  private givenBack(): Promise<M | undefined> {
    if (!this.options.reuse || this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout;
      const hand = (member: M | undefined) => {
        clearTimeout(timer);
        resolve(member);
      };
      const check = () => {
        const quietMs = performance.now() - this.lastReturnAt;
        if (quietMs < GROW_AFTER_MS) return arm(GROW_AFTER_MS - quietMs);
        // One new process at a time: calls that come back meanwhile may make the next one needless.
        if (this.growing > 0 || this.starting.size > 0) return arm(GROW_AFTER_MS);
        this.handoff.splice(this.handoff.indexOf(hand), 1);
        resolve(undefined);
      };
      const arm = (ms: number) => {
        timer = setTimeout(check, ms);
        timer.unref();
      };
      arm(GROW_AFTER_MS);
      this.handoff.push(hand);
    });
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
    if (this.closed) throw new Error(`the process pool of upstream '${this.name}' is closed`);
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

  /** The call is over: `clean` (its handler answered) may reuse the process; otherwise it is ended. */
  give(member: M, clean: boolean): void {
    this.busy--;
    const reusable = clean && this.options.reuse && !this.closed && member.connector.isReady();
    if (reusable) this.lastReturnAt = performance.now();
    const next = this.handoff.shift();
    if (reusable && next) return next(member); // the next call has it (it counted itself busy in take)
    if (reusable) this.idle.push(member);
    else this.retire(member);
    // A call waiting for a process gets a new one now rather than after GROW_AFTER_MS.
    next?.(undefined);
    this.refill();
  }

  /** Once a process of the pool first came up (readiness). */
  get warmed(): boolean {
    return this.everUp;
  }

  /** Processes by state, for the pool gauge. */
  counts(): Record<PoolState, number> {
    return { idle: this.idle.length, busy: this.busy - this.waiting, starting: this.starting.size + this.growing, stopping: this.stopping };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const hand of this.handoff.splice(0)) hand(undefined);
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled(this.idle.splice(0).map((m) => m.connector.close()));
  }

  /** Ended in the background: stdin closed, `shutdownGraceMs`, SIGTERM, then SIGKILL. */
  private retire(member: M): void {
    this.stopping++;
    void member.connector
      .close()
      .catch((err: unknown) => this.logger.warn({ err: String(err) }, "could not stop a pooled upstream process"))
      .finally(() => this.stopping--);
  }

  /**
   * pool: keeps `warm` processes in all (a busy one counts: it comes back); per-call: keeps `warm`
   * idle ones ready, since each call uses one up. Never beyond `size`.
   */
  private refill(): void {
    const { size, warm, reuse } = this.options;
    const total = () => this.busy - this.waiting + this.idle.length + this.starting.size;
    const short = () => (reuse ? total() < warm : this.idle.length + this.starting.size < warm);
    while (!this.closed && short() && total() < size) {
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
      else this.idle.push(member);
    } catch (err) {
      await member.connector.close();
      const delayMs = this.backoff.next();
      this.logger.warn({ err: String((err as Error).message ?? err), retryInMs: delayMs }, "could not start a pooled upstream process");
      // The pool refills once this attempt is over (see refill), after the backoff.
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
    }
  }

  private member(): M {
    const id = ++this.next;
    return this.create(new StdioConnector(this.name, this.config, this.logger.child({ process: id }), this.options.generation), id);
  }
}

/**
 * Started, initialized, and past what the server does on `notifications/initialized`: a ping
 * answered after it is a barrier (a server handles its input in order), so a question the server
 * asks at start (the roots/list of the reference filesystem server) arrives before any call is
 * given the process, and is answered as belonging to no call.
 */
async function started(connector: StdioConnector): Promise<void> {
  await connector.start();
  // Any answer will do, an error too: only its place in the stream matters.
  await connector.request({ method: "ping" }).catch(() => undefined);
}
