import type { NewTask, TaskFilter, TaskRecord } from "../contract.js";
import { expiresAt } from "../task-fields.js";
import { filterPage } from "../task-filter.js";
import type { RedisConnection } from "./connection.js";
import { ALL_SHARDS, type RedisKeys } from "./keys.js";
import { byShard, mergedShards } from "./sharded-index.js";

const BATCH = 100;

/**
 * Every task, for operators (the admin API): sorted sets scored by expiry time, so each add also
 * drops the entries of tasks that have expired and no set outgrows the live tasks. Sharded
 * (keys.ts ALL_SHARDS): one set would be one hot key written on every create. Like the
 * principal index each shard lives in a slot of its own, so it is written beside the create
 * script, and a listed id whose task is gone is dropped when seen. Order: latest expiry first,
 * which is newest first among tasks with the same TTL; the shards are merged into that one order.
 */
export class RedisAllTasksIndex {
  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  /** The commands to add a new task, for the caller's pipeline. */
  addTo(
    pipeline: { zadd(key: string, score: number, member: string): unknown; zremrangebyscore(key: string, min: string, max: number): unknown },
    task: NewTask,
  ): void {
    const shard = this.keys.allTasksShardOf(task.id);
    pipeline.zadd(shard, expiresAt(task), task.id);
    pipeline.zremrangebyscore(shard, "-inf", Date.now());
  }

  async list(filter: TaskFilter, page: { cursor?: string; limit: number }, read: (id: string) => Promise<TaskRecord | undefined>) {
    let after: { id: string; score: number } | undefined;
    if (page.cursor !== undefined) {
      const cursor = page.cursor;
      const score = await this.connection.call((c) => c.zscore(this.keys.allTasksShardOf(cursor), cursor));
      if (score === null) return undefined;
      after = { id: cursor, score: Number(score) };
    }
    const shards = Array.from({ length: ALL_SHARDS }, (_, n) => this.keys.allTasksShard(n));
    const drop = async (ids: string[]) => {
      const groups = byShard(ids, (id) => this.keys.allTasksShardOf(id));
      await Promise.all([...groups].map(([shard, members]) => this.connection.call((c) => c.zrem(shard, ...members))));
    };
    return filterPage(mergedShards(this.connection, shards, BATCH, after), read, filter, page.limit, drop);
  }
}
