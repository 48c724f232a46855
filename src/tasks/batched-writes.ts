import type { TaskChange, TaskStore, TransitionResult } from "../store/contract.js";

/** Writes per batch: one pipeline, well inside the store's deadline for one call. */
const MAX_BATCH = 500;

interface Pending {
  id: string;
  change: TaskChange;
  resolve: (result: TransitionResult) => void;
  reject: (err: unknown) => void;
}

/**
 * An owner's writes of its calls' outcomes and status messages leave in batches: those of one
 * event-loop turn in one round trip (per store node), at most MAX_BATCH at a time, the next batch
 * once the last is answered, in the order they were asked for (a call's last status message goes
 * before its outcome). Ten thousand calls ending in the same second, each with a last progress
 * and its outcome, are then a few dozen pipelines, each answered well inside the store's deadline,
 * instead of twenty thousand scripts in flight at once, the last of which miss it. What waits here
 * is bounded by the calls this replica owns: each has at most one write of each kind waiting
 * (OwnedCall holds back a status message while its last one is still in flight).
 */
export class BatchedWrites {
  private queue: Pending[] = [];
  private running = false;

  constructor(private readonly store: Pick<TaskStore, "transitionTasks">) {}

  /** As `transitionTask`: the result, or the error the store gave for this write alone. */
  write(id: string, change: TaskChange): Promise<TransitionResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id, change, resolve, reject });
      if (this.running) return;
      this.running = true;
      // After the writes already under way in this turn have queued theirs.
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const results = await this.store.transitionTasks(batch.map(({ id, change }) => ({ id, change })));
        batch.forEach((pending, i) => {
          const result = results[i];
          if (result === undefined) pending.reject(new Error("the store answered fewer writes than it was sent"));
          else if (result instanceof Error) pending.reject(result);
          else pending.resolve(result);
        });
      } catch (err) {
        for (const pending of batch) pending.reject(err);
      }
    }
    this.running = false;
  }
}
