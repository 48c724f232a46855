import type { Lease, OrphanEnd, TaskRecord, TransitionResult } from "../contract.js";
import { encodeOutcome } from "../task-fields.js";
import { assertToken } from "../task-rules.js";
import type { RedisKeys } from "./keys.js";
import type { LiveIndex } from "./live-index.js";
import { acquireLock } from "./lua/acquire-lock-1.js";
import { probeTask } from "./lua/probe-task-2.js";
import { reapTask } from "./lua/reap-task-3.js";
import type { ScriptRunner } from "./scripts.js";
import { transitionResult } from "./task-replies.js";

const GONE = 0;
const ORPHAN = 2;

/** What the reaper asks of Redis: find orphans through the live index, end or claim them, its lock. */
export class RedisOrphans {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
    private readonly index: LiveIndex,
    private readonly read: (id: string) => Promise<TaskRecord | undefined>,
  ) {}

  /** Candidates from every shard, probed in one pipelined batch; gone ones leave the index. */
  async findOrphans(createdBefore: number, limit: number): Promise<TaskRecord[]> {
    const ids = await this.index.candidates(createdBefore, limit);
    const probes = await this.scripts.runEach(
      probeTask,
      ids.map((id) => ({ keys: [this.keys.task(id), this.keys.taskLease(id)], args: [] })),
    );
    const gone = ids.filter((_, i) => probes[i] === GONE);
    if (gone.length) await this.index.remove(gone);
    const orphans = await Promise.all(ids.filter((_, i) => probes[i] === ORPHAN).map((id) => this.read(id)));
    return orphans.filter((t): t is TaskRecord => t !== undefined).slice(0, limit);
  }

  async reapTask(id: string, end: OrphanEnd): Promise<TransitionResult> {
    const outcome = end.outcome ? encodeOutcome(end.outcome) : "";
    const args = ["end", end.now, this.keys.taskChannel(id), end.statusMessage, end.to, outcome];
    return this.run(id, args);
  }

  async claimTask(id: string, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult> {
    assertToken(lease.token);
    return this.run(id, ["claim", now, this.keys.taskChannel(id), statusMessage, lease.owner, lease.token, lease.leaseMs]);
  }

  async acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.run(acquireLock, [this.keys.lock(name)], [holder, ttlMs])) === 1;
  }

  private async run(id: string, args: (string | number)[]): Promise<TransitionResult> {
    const k = this.keys.taskKeys(id);
    return transitionResult(await this.scripts.run(reapTask, [k.hash, k.outcome, k.lease], args), reapTask.name);
  }
}
