import type { TaskFilter, TaskRecord } from "./contract.js";

/** Whether an operator's filter (admin API) matches a task; both stores use this one rule. */
export function matchesFilter(task: TaskRecord, filter: TaskFilter): boolean {
  // A call parked by an MRTR round is the client's request still, not a task.
  if (task.parked) return false;
  if (filter.status?.length && !filter.status.includes(task.status)) return false;
  if (filter.upstream !== undefined && task.upstream !== filter.upstream) return false;
  if (filter.tool !== undefined && task.tool !== filter.tool) return false;
  return true;
}

/** How many tasks one page may examine, whatever the filter: a page is bounded work. */
export const MAX_EXAMINED_PER_PAGE = 1000;

type Page = { tasks: TaskRecord[]; nextCursor?: string };

/**
 * One page of an operator's listing: reads the ids batch by batch in the store's order, keeps
 * the tasks that exist and match, and stops at `limit` matches or MAX_EXAMINED_PER_PAGE ids; the
 * cursor is then the last id examined. Ids whose task is gone (expired) are handed to `gone`.
 */
export async function filterPage(
  batches: AsyncIterable<string[]>,
  read: (id: string) => Promise<TaskRecord | undefined>,
  filter: TaskFilter,
  limit: number,
  gone: (ids: string[]) => Promise<void> = async () => undefined,
): Promise<Page> {
  const tasks: TaskRecord[] = [];
  let examined = 0;
  for await (const batch of batches) {
    const found = await Promise.all(batch.map(read));
    await gone(batch.filter((_, i) => !found[i]));
    for (const [i, task] of found.entries()) {
      examined++;
      if (task && matchesFilter(task, filter)) tasks.push(task);
      if (tasks.length >= limit || examined >= MAX_EXAMINED_PER_PAGE) return { tasks, nextCursor: batch[i] as string };
    }
  }
  return { tasks };
}
