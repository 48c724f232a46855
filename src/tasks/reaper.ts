import type { Orphan, OrphanEnd, TaskRecord } from "../store/contract.js";
import type { RerunPolicy } from "./rerun-policy.js";
import type { EngineDeps } from "./types.js";
import { RPC } from "../jsonrpc/codes.js";

/** Orphans handled per sweep; the rest wait for the next one. */
const BATCH = 500;
const LOCK = "reaper";

/** What the reaper hands back to the engine: run an orphan's call again here. */
export type Adopt = (orphan: Orphan, statusMessage: string) => Promise<void>;
/** Follow here what a stopped replica followed: the upstream's own task, or the call's response stream. */
export type Resume = (orphan: Orphan) => Promise<void>;

/**
 * Finds non-terminal tasks whose owner stopped renewing its lease, and ends them truthfully
 * (design: Replicas). One replica at a time sweeps, guarded by a lock that lapses after one
 * interval, so when the sweeping replica dies another takes over. It looks only at the tasks held
 * under leases that lapsed, so a sweep costs the same however many calls live replicas hold.
 * Every change it makes is checked in the store (non-terminal, still held under the lapsed
 * lease), so two sweepers can never both act on one task.
 */
export class Reaper {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly deps: EngineDeps,
    private readonly policy: RerunPolicy,
    private readonly adopt: Adopt,
    private readonly ended: (task: TaskRecord) => void,
    private readonly resume: Resume,
  ) {}

  start(): void {
    const { reaperIntervalMs } = this.deps.options;
    this.timer = setInterval(() => void this.tick(), reaperIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  private tick(): void {
    this.sweeping ??= this.sweep()
      .catch((err: unknown) => this.deps.logger.warn({ err }, "reaper sweep failed"))
      .finally(() => (this.sweeping = undefined));
  }

  /** One pass: take (or keep) the lock, then settle every orphan found. */
  async sweep(): Promise<void> {
    const { store, options } = this.deps;
    if (!(await store.acquireLock(LOCK, options.replicaId, options.reaperIntervalMs))) return;
    // An id listed under a lapsed lease whose task is not there yet is kept for one more lease: a
    // create sent just before the lease lapsed may still land.
    const orphans = await store.findOrphans(BATCH, options.leaseMs);
    for (const orphan of orphans) await this.settle(orphan);
  }

  private async settle(orphan: Orphan): Promise<void> {
    const { task } = orphan;
    const run = this.policy.max > 1 ? ` (attempt ${task.attempt} of ${this.policy.max})` : "";
    if (this.policy.follows(task)) {
      // The upstream runs the call as its own task, or keeps the call's response stream to replay,
      // either outliving the stopped replica: follow it from here, a cancel asked for included
      // (the renewal hands it on), and run nothing again.
      await this.resume(orphan);
    } else if (task.cancelRequested) {
      const statusMessage = "Cancelled at the client's request; the replica running the call stopped before confirming it";
      await this.end(orphan, { to: "cancelled", statusMessage, now: this.deps.clock() });
    } else if (task.queued && !task.parked && task.requestParams !== undefined) {
      // It waited in its owner's queue: nothing of it ran, so it waits in this replica's queue
      // now, whatever the re-run policy (no call runs twice: the start is written before the call goes upstream).
      await this.adopt(orphan, "The replica this task was queued on stopped before it started; it waits in another replica's queue now");
    } else if (!task.parked && (await this.policy.allows(task))) {
      // A parked call (an MRTR round) is still the client's synchronous call: its retry goes to
      // the parked call, which a re-run elsewhere would not be, so it is only ever ended.
      await this.adopt(
        orphan,
        `The replica running this call stopped renewing its lease${run}; running it again: attempt ${task.attempt + 1} of ${this.policy.max}`,
      );
    } else {
      // -32603 is the internal error of both task protocols (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Error Handling; https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md); a failed task carries
      // its error and a statusMessage (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md). The reaper
      // knows only that the lease lapsed with no outcome written: an owner that could not write
      // its outcome fails the task itself, so what is left is an owner gone, or one cut off from
      // the store for leaseMs (it abandons its calls).
      const statusMessage = `The taskgate replica running this call stopped renewing its lease before an outcome was written (it stopped, or lost the task store)${run}`;
      await this.end(orphan, { to: "failed", statusMessage, outcome: { error: { code: RPC.INTERNAL_ERROR, message: statusMessage } }, now: this.deps.clock() });
    }
  }

  /** One checked change; counted and logged only when this reaper made it. */
  private async end(orphan: Orphan, end: OrphanEnd): Promise<void> {
    const { task } = orphan;
    const ended = await this.deps.store.reapTask(orphan, end);
    if (!ended.ok) return;
    this.ended(ended.task);
    this.deps.metrics.reaperAction(end.to);
    const ms = Math.max(0, end.now - task.createdAt);
    this.deps.metrics.taskEnded(task.upstream, task.tool, end.to, ms / 1000);
    this.deps.logger.warn({ taskId: task.id, owner: task.owner, status: end.to, ms }, "reaped a task whose owner stopped");
  }
}
