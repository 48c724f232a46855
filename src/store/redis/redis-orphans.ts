import type { Lease, OrphanEnd, TaskRecord, TransitionResult } from "../contract.js";
import { encodeOutcome } from "../task-fields.js";
import { assertToken } from "../task-rules.js";
import type { RedisKeys } from "./keys.js";
import type { LiveIndex } from "./live-index.js";
import { acquireLock } from "./lua/acquire-lock-1.js";
import { probeTask } from "./lua/probe-task-2.js";
import { claimOrphan } from "./lua/claim-orphan-3.js";
import { endOrphan } from "./lua/end-orphan-3.js";
import type { LuaScript, ScriptRunner } from "./scripts.js";
import { transitionResult } from "./task-replies.js";

const GONE = 0;
const ORPHAN = 2;
/** Index entries read per shard and page; a sweep reads at most MAX_PAGES pages. */
const PAGE = 500;
const MAX_PAGES = 40;

/** What the reaper asks of Redis: find orphans through the live index, end or claim them, its lock. */
export class RedisOrphans {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
    private readonly index: LiveIndex,
    private readonly read: (id: string) => Promise<TaskRecord | undefined>,
    private readonly pageSize = PAGE,
  ) {}

  /**
   * Page through every shard (so live tasks at the head never hide orphans behind them), each
   * page probed in one pipelined batch. Gone entries leave the index once the scan is over, so
   * the offsets hold while it runs.
   */
  async findOrphans(createdBefore: number, limit: number): Promise<TaskRecord[]> {
    const orphans: TaskRecord[] = [];
    const gone: string[] = [];
    for (let page = 0; page < MAX_PAGES && orphans.length < limit; page++) {
      const ids = await this.index.candidates(createdBefore, page * this.pageSize, this.pageSize);
      if (ids.length === 0) break;
      const probes = await this.scripts.runEach(
        probeTask,
        ids.map((id) => ({ keys: [this.keys.task(id), this.keys.taskLease(id)], args: [] })),
      );
      gone.push(...ids.filter((_, i) => probes[i] === GONE));
      const found = await Promise.all(ids.filter((_, i) => probes[i] === ORPHAN).map((id) => this.read(id)));
      orphans.push(...found.filter((t): t is TaskRecord => t !== undefined));
    }
    if (gone.length) await this.index.remove(gone);
    return orphans.slice(0, limit);
  }

  async reapTask(id: string, end: OrphanEnd): Promise<TransitionResult> {
    const outcome = end.outcome ? encodeOutcome(end.outcome) : "";
    return this.run(endOrphan, id, [end.now, this.keys.taskChannel(id), end.statusMessage, end.to, outcome]);
  }

  async claimTask(id: string, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult> {
    assertToken(lease.token);
    return this.run(claimOrphan, id, [now, this.keys.taskChannel(id), statusMessage, lease.owner, lease.token, lease.leaseMs]);
  }

  async acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.run(acquireLock, [this.keys.lock(name)], [holder, ttlMs])) === 1;
  }

  private async run(script: LuaScript, id: string, args: (string | number)[]): Promise<TransitionResult> {
    const k = this.keys.taskKeys(id);
    return transitionResult(await this.scripts.run(script, [k.hash, k.outcome, k.lease], args), script.name);
  }
}
