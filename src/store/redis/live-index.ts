import type { NewTask } from "../contract.js";
import { expiresAt } from "../task-fields.js";
import type { RedisConnection } from "./connection.js";
import { LIVE_SHARDS, type RedisKeys } from "./keys.js";
import { byShard } from "./sharded-index.js";

/**
 * Every task that may still need the reaper, in LIVE_SHARDS sorted sets by createdAt (keys.ts).
 * Written BEFORE the task itself: a replica that dies between the two leaves an id whose task
 * never existed (the reaper drops it), never a task the reaper cannot find. Entries of tasks that
 * ended or expired are dropped by the reaper when it meets them.
 */
export class LiveIndex {
  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  /** One round trip; a shard lives as long as its newest task. */
  async add(task: NewTask): Promise<void> {
    const shard = this.keys.liveShardOf(task.id);
    const until = expiresAt(task);
    await this.connection.call((c) => c.pipeline().zadd(shard, task.createdAt, task.id).pexpireat(shard, until, "NX").pexpireat(shard, until, "GT").exec());
  }

  /** Oldest first, `count` from `offset` in every shard, all shards read at once. */
  async candidates(createdBefore: number, offset: number, count: number): Promise<string[]> {
    const shards = Array.from({ length: LIVE_SHARDS }, (_, n) => this.keys.liveShard(n));
    const found = await Promise.all(shards.map((shard) => this.connection.call((c) => c.zrangebyscore(shard, "-inf", createdBefore, "LIMIT", offset, count))));
    return found.flat();
  }

  async remove(ids: readonly string[]): Promise<void> {
    const groups = byShard(ids, (id) => this.keys.liveShardOf(id));
    await Promise.all([...groups].map(([shard, members]) => this.connection.call((c) => c.zrem(shard, ...members))));
  }
}
