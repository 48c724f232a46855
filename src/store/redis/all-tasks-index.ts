import type { NewTask, TaskFilter, TaskRecord } from "../contract.js";
import { expiresAt } from "../task-fields.js";
import { filterPage } from "../task-filter.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

const BATCH = 100;

/**
 * Every task, for operators (the admin API): a sorted set scored by expiry time, so each add also
 * drops the entries of tasks that have expired and the set never outgrows the live tasks. Like the
 * principal index it lives in a slot of its own, so it is written beside the create script, and a
 * listed id whose task is gone is dropped when seen. Order: latest expiry first, which is newest
 * first among tasks with the same TTL.
 */
export class RedisAllTasksIndex {
  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  /** The commands to add a new task, for the caller's pipeline. */
  addTo(pipeline: { zadd(key: string, score: number, member: string): unknown; zremrangebyscore(key: string, min: string, max: number): unknown }, task: NewTask): void {
    const index = this.keys.allTasks();
    pipeline.zadd(index, expiresAt(task), task.id);
    pipeline.zremrangebyscore(index, "-inf", Date.now());
  }

  async list(filter: TaskFilter, page: { cursor?: string; limit: number }, read: (id: string) => Promise<TaskRecord | undefined>) {
    const index = this.keys.allTasks();
    let start = 0;
    if (page.cursor !== undefined) {
      const rank = await this.connection.call((c) => c.zrevrank(index, page.cursor as string));
      if (rank === null) return undefined;
      start = rank + 1;
    }
    const connection = this.connection;
    async function* batches(): AsyncIterable<string[]> {
      for (let from = start; ; from += BATCH) {
        const ids = await connection.call((c) => c.zrevrange(index, from, from + BATCH - 1));
        if (ids.length) yield ids;
        if (ids.length < BATCH) return;
      }
    }
    const drop = async (ids: string[]) => {
      if (ids.length) await this.connection.call((c) => c.zrem(index, ...ids));
    };
    return filterPage(batches(), read, filter, page.limit, drop);
  }
}
