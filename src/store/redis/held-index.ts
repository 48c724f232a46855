import type { RedisConnection } from "./connection.js";
import { execChecked } from "./errors.js";
import type { RedisKeys } from "./keys.js";

/** Set entries removed per SREM: one command per lease token and batch, never one per task. */
const MAX_BATCH = 1_000;
/** A flagged task no owner took in this long is dropped (a replica that stopped has no use for it). */
const FLAG_LIFE_MS = 24 * 60 * 60 * 1000;

/**
 * The tasks held under each replica lease token (`{held:<token>}`), so the reaper reads only the
 * tasks of leases that lapsed, and the tasks flagged for an owner (`{flag:<owner>}`).
 *
 * An id is added BEFORE its task is written (created or claimed): a replica that dies between the
 * two leaves an id whose task never existed, which the reaper drops once the lease has lapsed for
 * long enough, never a task the reaper cannot find. An id leaves the set when its task ends:
 * the ends of one event-loop turn leave together, one SREM per token.
 */
export class HeldIndex {
  private pending = new Map<string, string[]>();
  private flushing = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  /** One round trip; the set lives as long as its longest-lived task. */
  async add(token: string, taskId: string, until: number): Promise<void> {
    const key = this.keys.heldUnder(token);
    await this.connection.call((c) => execChecked(c.pipeline().sadd(key, taskId).pexpireat(key, until, "NX").pexpireat(key, until, "GT")));
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

  async remove(token: string, ids: readonly string[]): Promise<void> {
    const key = this.keys.heldUnder(token);
    for (let i = 0; i < ids.length; i += MAX_BATCH) {
      const batch = ids.slice(i, i + MAX_BATCH);
      await this.connection.call((c) => c.srem(key, ...batch));
    }
  }

  /** One page of the ids held under `token`: SSCAN, so a large set is read a bounded page at a time. */
  async page(token: string, cursor: string, count: number): Promise<{ cursor: string; ids: string[] }> {
    const [next, ids] = await this.connection.call((c) => c.sscan(this.keys.heldUnder(token), cursor, "COUNT", count));
    return { cursor: next, ids };
  }

  async size(token: string): Promise<number> {
    return this.connection.call((c) => c.scard(this.keys.heldUnder(token)));
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
