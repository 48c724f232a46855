import type { Lease, Orphan, OrphanEnd, TaskRecord, TransitionResult } from "../contract.js";
import { encodeOutcome, expiresAt } from "../task-fields.js";
import { assertToken } from "../task-rules.js";
import type { HeldIndex } from "./held-index.js";
import type { RedisKeys } from "./keys.js";
import { acquireLock } from "./lua/acquire-lock-1.js";
import { claimOrphan } from "./lua/claim-orphan-3.js";
import { endOrphan } from "./lua/end-orphan-3.js";
import { lapsedLeases } from "./lua/lapsed-leases-1.js";
import { probeTask } from "./lua/probe-task-2.js";
import { replicaLease } from "./lua/replica-lease-1.js";
import type { DurableWrites } from "./durable-writes.js";
import type { LuaScript, ScriptRunner } from "./scripts.js";
import { strings, transitionResult } from "./task-replies.js";

/** probe-task-2's answers. */
const MISSING = 0;
const ORPHAN = 2;
/** Set entries read per SSCAN page; a sweep reads at most MAX_PAGES pages. */
const PAGE = 500;
const MAX_PAGES = 40;
/** Lapsed leases looked at per sweep. */
const MAX_LEASES = 100;

/**
 * The replica leases and what the reaper asks of Redis: the lapsed leases, the tasks still held
 * under them, and the checked end or claim of each. At rest a sweep is one script (no lease
 * lapsed) and a renewal one script per replica, however many calls are held.
 */
export class RedisOrphans {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
    private readonly held: HeldIndex,
    private readonly read: (id: string) => Promise<TaskRecord | undefined>,
    /** The reaper's end or claim of a task is acknowledged like an owner's (durable-writes.ts). */
    private readonly durable: DurableWrites,
    private readonly pageSize = PAGE,
  ) {}

  async renewReplicaLease(token: string, leaseMs: number, first = false): Promise<boolean> {
    assertToken(token);
    return (await this.scripts.run(replicaLease, [this.keys.leases()], [token, leaseMs, first ? "start" : "renew"])) === 1;
  }

  async endReplicaLease(token: string): Promise<void> {
    assertToken(token);
    await this.scripts.run(replicaLease, [this.keys.leases()], [token, 0, "end"]);
  }

  /**
   * The lapsed leases, oldest first, and for each its held tasks a page at a time, each page
   * probed in one pipelined batch. Ended, claimed and (once the lease lapsed `settleMs` ago)
   * missing entries leave the set; a lapsed lease with nothing left is forgotten.
   */
  async findOrphans(limit: number, settleMs: number): Promise<Orphan[]> {
    const [now, ...pairs] = strings(await this.scripts.run(lapsedLeases, [this.keys.leases()], [MAX_LEASES]));
    const orphans: Orphan[] = [];
    for (let i = 0; i + 1 < pairs.length && orphans.length < limit; i += 2) {
      const token = pairs[i] as string;
      const settled = Number(now) - Number(pairs[i + 1]) > settleMs;
      const complete = await this.orphansOf(token, settled, limit - orphans.length, orphans);
      if (complete && settled && (await this.held.size(token)) === 0) await this.held.forgetLease(token);
    }
    return orphans;
  }

  async reapTask({ task, token }: Orphan, end: OrphanEnd): Promise<TransitionResult> {
    const outcome = end.outcome ? encodeOutcome(end.outcome) : "";
    return this.settle(endOrphan, task.id, token, [end.now, this.keys.taskChannel(task.id), end.statusMessage, token, end.to, outcome]);
  }

  /** Listed under the new token first, as a create is: the reaper must find it if this replica stops too. */
  async claimTask({ task, token }: Orphan, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult> {
    assertToken(lease.token);
    await this.held.add(lease.token, task.id, expiresAt(task));
    return this.settle(claimOrphan, task.id, token, [now, this.keys.taskChannel(task.id), statusMessage, token, lease.owner, lease.token]);
  }

  async acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.run(acquireLock, [this.keys.lock(name)], [holder, ttlMs])) === 1;
  }

  /** Adds to `into` the orphans of one lapsed lease; true when its whole set was read. */
  private async orphansOf(token: string, settled: boolean, limit: number, into: Orphan[]): Promise<boolean> {
    const drop: string[] = [];
    let cursor = "0";
    let found = 0;
    for (let page = 0; page < MAX_PAGES && found < limit; page++) {
      const next = await this.held.page(token, cursor, this.pageSize);
      cursor = next.cursor;
      const probes = await this.scripts.runEach(
        probeTask,
        next.ids.map((id) => ({ keys: [this.keys.task(id), this.keys.taskLease(id)], args: [token] })),
      );
      drop.push(...next.ids.filter((_, i) => probes[i] !== ORPHAN && (probes[i] !== MISSING || settled)));
      const tasks = await Promise.all(next.ids.filter((_, i) => probes[i] === ORPHAN).map((id) => this.read(id)));
      for (const task of tasks) if (task && found++ < limit) into.push({ task, token });
      if (cursor === "0") break;
    }
    if (drop.length) await this.held.remove(token, drop, true);
    return cursor === "0";
  }

  /** The reaper's change; whatever it finds (done, ended, claimed elsewhere), the task leaves the lapsed lease's set. */
  private async settle(script: LuaScript, id: string, from: string, args: (string | number)[]): Promise<TransitionResult> {
    const k = this.keys.taskKeys(id);
    const result = transitionResult(await this.durable.run({ script, keys: [k.hash, k.outcome, k.lease], args }), script.name);
    await this.held.remove(from, [id], true);
    return result;
  }
}
