import { StoreUnavailableError } from "../contract.js";
import type { RedisConnection } from "./connection.js";
import type { DurableWrites } from "./durable-writes.js";
import { execChecked } from "./errors.js";
import { HELD_SPARES, shardOf, type RedisKeys } from "./keys.js";
import { holdTask } from "./lua/hold-task-1.js";

/** Set entries removed per SREM: one command per lease token and batch, never one per task. */
const MAX_BATCH = 1_000;
/** A flagged task no owner took in this long is dropped (a replica that stopped has no use for it). */
const FLAG_LIFE_MS = 24 * 60 * 60 * 1000;

/**
 * The tasks held under each replica lease token (`{held:<token>}`), so the reaper reads only the
 * tasks of leases that lapsed, and the tasks flagged for an owner (`{flag:<owner>}`).
 *
 * An id is added BEFORE its task is written (created or claimed), and confirmed by the replicas
 * as the task is: a replica that dies between the two leaves an id whose task never existed, which
 * the reaper drops once the lease has lapsed for long enough, never a task the reaper cannot find.
 * An id leaves the set when its task ends: the ends of one event-loop turn leave together, one
 * SREM per token. Where the set's primary refuses the write, the id goes to a spare set
 * (keys.heldSpare), and the reaper reads those too.
 */
export class HeldIndex {
  private pending = new Map<string, string[]>();
  private flushing = false;
  /** Tokens of this replica that listed a task in a spare: their ends leave the spares too. */
  private readonly spared = new Set<string>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly durable: DurableWrites,
  ) {}

  /** One confirmed script; in the task's spare set when the first set's primary cannot take it. */
  async add(token: string, taskId: string, until: number): Promise<void> {
    try {
      await this.durable.run({ script: holdTask, keys: [this.keys.heldUnder(token)], args: [taskId, until] });
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      this.spared.add(token);
      await this.durable.run({ script: holdTask, keys: [this.keys.heldSpare(token, shardOf(taskId, HELD_SPARES))], args: [taskId, until] });
    }
  }

  /**
   * The task ended (or is gone): forget it, with the others of this turn. Lost on a store error:
   * the entry then stays until the token's lease lapses, and the reaper drops it.
   */
  forget(token: string, taskId: string): void {
    const ids = this.pending.get(token);
    if (ids) ids.push(taskId);
    else this.pending.set(token, [taskId]);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  /** `spares`: also from the spare sets (the reaper's removals: another replica may have used them). */
  async remove(token: string, ids: readonly string[], spares = this.spared.has(token)): Promise<void> {
    await this.removeFrom(this.keys.heldUnder(token), ids);
    if (!spares) return;
    const bySpare = new Map<number, string[]>();
    for (const id of ids) {
      const k = shardOf(id, HELD_SPARES);
      const some = bySpare.get(k);
      if (some) some.push(id);
      else bySpare.set(k, [id]);
    }
    await Promise.all([...bySpare].map(([k, some]) => this.removeFrom(this.keys.heldSpare(token, k), some)));
  }

  /**
   * One page of the ids held under `token`: SSCAN, so a large set is read a bounded page at a
   * time; the first set, then each spare. The cursor says which set and where in it; "0" starts
   * and ends.
   */
  async page(token: string, cursor: string, count: number): Promise<{ cursor: string; ids: string[] }> {
    const at = cursor.indexOf(":");
    const set = at < 0 ? 0 : Number(cursor.slice(0, at));
    const key = set === 0 ? this.keys.heldUnder(token) : this.keys.heldSpare(token, set - 1);
    const [next, ids] = await this.connection.call((c) => c.sscan(key, at < 0 ? cursor : cursor.slice(at + 1), "COUNT", count));
    if (next !== "0") return { cursor: `${set}:${next}`, ids };
    return { cursor: set < HELD_SPARES ? `${set + 1}:0` : "0", ids };
  }

  async size(token: string): Promise<number> {
    const keys = [this.keys.heldUnder(token), ...Array.from({ length: HELD_SPARES }, (_, k) => this.keys.heldSpare(token, k))];
    const sizes = await Promise.all(keys.map((key) => this.connection.call((c) => c.scard(key))));
    return sizes.reduce((a, b) => a + b, 0);
  }

  private async removeFrom(key: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += MAX_BATCH) {
      const batch = ids.slice(i, i + MAX_BATCH);
      await this.connection.call((c) => c.srem(key, ...batch));
    }
  }

  /** A lapsed lease with no task left: nothing more to look at. */
  async forgetLease(token: string): Promise<void> {
    await this.connection.call((c) => c.zrem(this.keys.leases(), token));
  }

  async flag(owner: string, taskId: string): Promise<void> {
    const key = this.keys.flagged(owner);
    await this.connection.call((c) => execChecked(c.pipeline().sadd(key, taskId).pexpire(key, FLAG_LIFE_MS)));
  }

  async takeFlagged(owner: string, max: number): Promise<string[]> {
    return this.connection.call((c) => c.spop(this.keys.flagged(owner), max));
  }

  private async flush(): Promise<void> {
    const batches = this.pending;
    this.pending = new Map();
    this.flushing = false;
    await Promise.all([...batches].map(([token, ids]) => this.remove(token, ids).catch(() => undefined)));
  }
}
