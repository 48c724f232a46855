import type { OwnedCall } from "./owned-call.js";
import { ownerChannel, type EngineDeps } from "./types.js";

interface Hint {
  taskId: string;
}

/**
 * The calls this replica owns: their leases, renewed for all of them in one round trip every
 * third of `leaseMs`, and the owner channel on which other replicas route work to them. Every
 * renewal also reports what waits for a call (a cancel, answers), so a lost pub/sub message only
 * delays, never loses.
 */
export class Owner {
  readonly calls = new Map<string, OwnedCall>();
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => Promise<void>;
  /** The renewal running now: a slow store never gets a second one on top of it. */
  private renewing?: Promise<void>;
  private readonly onIdle: (() => void)[] = [];

  constructor(private readonly deps: EngineDeps) {}

  async start(): Promise<void> {
    const { options, store } = this.deps;
    this.unsubscribe = await store.bus.subscribe(ownerChannel(options.replicaId), (message) => void this.onHint(message));
    this.timer = setInterval(() => this.renewOnce(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
    await this.unsubscribe?.();
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

  /** Route work to a task's owner: locally when that is us, else over the bus. */
  async route(taskId: string, owner: string): Promise<void> {
    if (owner === this.deps.options.replicaId) return this.check(taskId);
    await this.deps.store.bus.publish(ownerChannel(owner), JSON.stringify({ taskId } satisfies Hint)).catch(() => undefined);
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

  private async renew(): Promise<void> {
    const calls = [...this.calls.values()];
    if (calls.length === 0) return;
    const { store, clock, options, logger } = this.deps;
    // The store counts the new lease from when it applies it, somewhere in the round trip: the
    // owner counts from before it asked, so it never believes a lease longer than it is.
    const sentAt = clock();
    try {
      const states = await store.renewLeases(
        calls.map((c) => ({ taskId: c.task.id, token: c.token })),
        options.leaseMs,
      );
      this.deps.metrics.leaseRenewed(states.filter((s) => s.held).length);
      for (const state of states) {
        const call = this.calls.get(state.taskId);
        if (!call) continue;
        if (!state.held) call.renewalRefused();
        else call.lastRenewedAt = sentAt;
        if (state.held && state.cancelRequested) call.requestCancel();
        if (state.held && state.hasInputResponses) call.deliverInput();
      }
    } catch (err) {
      logger.warn({ err }, "lease renewal failed");
      // Past leaseMs without a renewal the lease has expired in the store: stop writing.
      const now = clock();
      for (const call of calls) if (now - call.lastRenewedAt > options.leaseMs) call.leaseLost();
    }
  }
}
