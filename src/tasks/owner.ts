import { StoreUnavailableError, type TaskRecord } from "../store/contract.js";
import type { OwnedCall } from "./owned-call.js";
import { newLeaseToken } from "./task-id.js";
import { ownerChannel, type EngineDeps } from "./types.js";

interface Hint {
  taskId: string;
}

/**
 * Answers the owner has not taken yet, new or from an earlier tasks/update: routed again, so a
 * client's retry also repeats a hint and a flag that were lost (a failover right after the first).
 */
export function waitingForOwner(written: { accepted: string[]; task: TaskRecord }): boolean {
  return written.accepted.length > 0 || Object.keys(written.task.inputResponses).length > 0;
}

/** Flagged tasks taken per renewal. */
const MAX_FLAGGED = 1_000;
/** How often the owner checks that the records of the calls it holds are still in the store; ids per check. */
const AUDIT_MS = 30_000;
const AUDIT_BATCH = 1_000;

/**
 * The calls this replica owns, and the replica's lease: one token, renewed every third of
 * `leaseMs` in one round trip however many calls are held, under which every task here is created
 * or claimed. Work for a call reaches it on the owner channel (a hint) and, since a hint may be
 * lost, also as a flag in the store that each renewal takes: a lost message only delays.
 *
 * A lease that lapsed (the replica was paused or cut off from the store past `leaseMs`) is over
 * for good: another replica may claim its tasks, and the store refuses this replica's writes to
 * any task it claimed. The calls running under it are abandoned and a new lease is taken.
 */
export class Owner {
  readonly calls = new Map<string, OwnedCall>();
  /** The token of this replica's lease: every task here is held under it. */
  token = newLeaseToken();
  /** When the last renewal that held was sent: the lease is counted from before its write. */
  private renewedAt = 0;
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => Promise<void>;
  /** The renewal running now: a slow store never gets a second one on top of it. */
  private renewing?: Promise<void>;
  private readonly onIdle: (() => void)[] = [];
  private auditedAt = 0;

  constructor(private readonly deps: EngineDeps) {}

  async start(): Promise<void> {
    const { options, store } = this.deps;
    await this.takeLease();
    // Nothing is held yet: the first check of held records is one AUDIT_MS from now.
    this.auditedAt = this.deps.clock();
    this.unsubscribe = await store.bus.subscribe(ownerChannel(options.replicaId), (message) => void this.onHint(message));
    this.timer = setInterval(() => this.renewOnce(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
    // Nothing held: nothing for the reaper to wait a lease out for.
    if (this.calls.size === 0) await this.endLease();
  }

  /**
   * After the hand-over at shutdown: the lease ends now, so a live replica's reaper takes what
   * was handed over at its next sweep instead of after `leaseMs`.
   */
  async endLease(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    await this.deps.store.endReplicaLease(this.token).catch((err: unknown) => this.deps.logger.warn({ err }, "could not end the replica's lease"));
  }

  /** Whether tasks may be created under the lease now; counted from before the last renewal was sent. */
  get holdsLease(): boolean {
    return this.deps.clock() - this.renewedAt < this.deps.options.leaseMs;
  }

  /** The token to create a task under; StoreUnavailableError while the lease cannot be vouched for. */
  leaseToken(): string {
    if (!this.holdsLease) throw new StoreUnavailableError(new Error("this replica could not renew its lease in the task store"));
    return this.token;
  }

  /** One pass at a time: a tick that finds the last pass still waiting on the store skips. */
  private renewOnce(): void {
    this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
  }

  add(call: OwnedCall): void {
    this.calls.set(call.task.id, call);
  }

  remove(taskId: string): void {
    this.calls.delete(taskId);
    if (this.calls.size === 0) for (const resolve of this.onIdle.splice(0)) resolve();
  }

  /** Resolves when no call is owned any more, or after `timeoutMs`, whichever is first. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.onIdle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Route work to a task's owner: locally when that is us; else flagged in the store (the owner's
   * next renewal takes it) and hinted over the bus (at once).
   */
  async route(taskId: string, owner: string): Promise<void> {
    if (owner === this.deps.options.replicaId) return this.check(taskId);
    const { store } = this.deps;
    await Promise.all([
      store.flagForOwner(owner, taskId).catch((err: unknown) => this.deps.logger.debug({ err, taskId }, "could not flag a task for its owner")),
      store.bus.publish(ownerChannel(owner), JSON.stringify({ taskId } satisfies Hint)).catch(() => undefined),
    ]);
  }

  private async onHint(message: string): Promise<void> {
    let hint: Partial<Hint>;
    try {
      hint = JSON.parse(message) as Partial<Hint>;
    } catch {
      return;
    }
    if (typeof hint.taskId === "string") await this.check(hint.taskId);
  }

  /** A hint is only a hint: re-read the task and act on what the store says. */
  private async check(taskId: string): Promise<void> {
    const call = this.calls.get(taskId);
    if (!call) return;
    const task = await this.deps.store.getTask(taskId, null).catch(() => undefined);
    if (task?.cancelRequested) call.requestCancel();
    if (task && Object.keys(task.inputResponses).length > 0) call.deliverInput();
  }

  private async takeLease(): Promise<void> {
    const sentAt = this.deps.clock();
    await this.deps.store.renewReplicaLease(this.token, this.deps.options.leaseMs, true);
    this.renewedAt = sentAt;
  }

  private async renew(): Promise<void> {
    const { store, clock, options, logger, metrics } = this.deps;
    const sentAt = clock();
    try {
      if (await store.renewReplicaLease(this.token, options.leaseMs)) {
        this.renewedAt = sentAt;
        metrics.leaseRenewed();
      } else if (sentAt - this.renewedAt < options.leaseMs && !(await store.hasReplicaLease(this.token))) {
        // Not lapsed (the last renewal is younger than the lease) and unknown to the store: the
        // store lost it (a flush, a failover that lost writes). Nobody can have reaped under a
        // token the store does not know, so this replica takes it again and checks its tasks.
        logger.error(
          { calls: this.calls.size },
          "the task store lost this replica's lease (a flush, or a failover that lost writes): taking it again and checking the records of the calls it holds",
        );
        await store.renewReplicaLease(this.token, options.leaseMs, true);
        this.renewedAt = sentAt;
        this.auditedAt = 0;
      } else {
        this.lapsed("the store found it lapsed");
        this.token = newLeaseToken();
        await this.takeLease();
      }
      if (clock() - this.auditedAt >= AUDIT_MS) await this.audit();
      // Taken even with no call held: what was flagged for calls that ended is dropped, not kept.
      await this.takeFlagged();
    } catch (err) {
      logger.warn({ err }, "lease renewal failed");
      // Past leaseMs without a renewal the lease has lapsed in the store: stop writing.
      if (clock() - this.renewedAt > options.leaseMs) this.lapsed("no renewal reached the store in time");
    }
  }

  /**
   * The records of the calls held here, checked against the store: one whose record is gone while
   * its call runs was lost by the store (a failover without replication, a flush, an eviction),
   * and the call says so (OwnedCall.recordLost) rather than leave its id unknown.
   */
  private async audit(): Promise<void> {
    this.auditedAt = this.deps.clock();
    const ids = [...this.calls.keys()];
    for (let i = 0; i < ids.length; i += AUDIT_BATCH) {
      const missing = await this.deps.store.missingTasks(ids.slice(i, i + AUDIT_BATCH));
      for (const id of missing) void this.calls.get(id)?.recordLost();
    }
  }

  /** Every call running under the lapsed lease is abandoned: another replica may own its task now. */
  private lapsed(why: string): void {
    if (this.calls.size > 0) this.deps.logger.warn({ calls: this.calls.size, why }, "the replica's lease lapsed: abandoning the calls it held");
    for (const call of [...this.calls.values()]) call.renewalRefused();
  }

  /** Work flagged while a hint may have been lost: re-read each task, as a hint would. */
  private async takeFlagged(): Promise<void> {
    const ids = await this.deps.store.takeFlagged(this.deps.options.replicaId, MAX_FLAGGED);
    await Promise.all(ids.map((id) => this.check(id)));
  }
}
