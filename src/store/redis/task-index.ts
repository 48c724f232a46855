import type { NewTask, TaskRecord } from "../contract.js";
import { expiresAt } from "../task-fields.js";
import type { RedisConnection } from "./connection.js";
import { execChecked } from "./errors.js";
import type { RedisKeys } from "./keys.js";
import { RedisAllTasksIndex } from "./all-tasks-index.js";

type Page = { tasks: TaskRecord[]; nextCursor?: string };
type ReadTask = (id: string, principal: string) => Promise<TaskRecord | undefined>;

/**
 * A principal's tasks for `tasks/list` of the 2025-11-25 tasks: a sorted set by creation time. It lives in the
 * principal's own slot (another hash tag), so no task script may touch it; it is written beside
 * the script, and a listed id whose task is gone is one that expired (dropped when seen).
 */
export class RedisTaskIndex {
  readonly all: RedisAllTasksIndex;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {
    this.all = new RedisAllTasksIndex(connection, keys);
  }

  /**
   * One round trip for both indexes; the principal's lives as long as its newest task. In a
   * cluster the two keys live in different slots, and a pipeline may hold one slot's keys only:
   * there they go as two pipelines at once.
   */
  async add(task: NewTask): Promise<void> {
    const index = this.keys.principalTasks(task.principal);
    const until = expiresAt(task);
    await this.connection.call(async (c) => {
      const pipeline = c.pipeline().zadd(index, task.createdAt, task.id).pexpireat(index, until, "NX").pexpireat(index, until, "GT");
      if (!this.connection.isCluster) {
        this.all.addTo(pipeline, task);
        return execChecked(pipeline);
      }
      const all = c.pipeline();
      this.all.addTo(all, task);
      return Promise.all([execChecked(pipeline), execChecked(all)]);
    });
  }

  /** Newest first; an unknown cursor is undefined. */
  async list(principal: string, page: { cursor?: string; limit: number }, read: ReadTask): Promise<Page | undefined> {
    const index = this.keys.principalTasks(principal);
    const start = await this.startOf(index, page.cursor);
    if (start === undefined) return undefined;
    // One more than a page tells whether another page follows.
    const ids = await this.connection.call((c) => c.zrevrange(index, start, start + page.limit));
    const shown = ids.slice(0, page.limit);
    const found = await Promise.all(shown.map((id) => read(id, principal)));
    const gone = shown.filter((_, i) => !found[i]);
    if (gone.length) await this.connection.call((c) => c.zrem(index, ...gone));
    const tasks = found.filter((t): t is TaskRecord => !!t);
    return ids.length > page.limit ? { tasks, nextCursor: shown[shown.length - 1] as string } : { tasks };
  }

  private async startOf(index: string, cursor: string | undefined): Promise<number | undefined> {
    if (cursor === undefined) return 0;
    const rank = await this.connection.call((c) => c.zrevrank(index, cursor));
    return rank === null ? undefined : rank + 1;
  }
}
