import type { TaskRecord, TaskStatus } from "../store/contract.js";
import type { TaskEngine } from "../tasks/engine.js";
import { isTerminal } from "../tasks/transitions.js";
import { taskView } from "./view.js";

/** At most this many tasks are read for one overview (two pages of the all-tasks index). */
export const OVERVIEW_MAX_EXAMINED = 2000;
const PAGE = 500;
/** Ended tasks listed, newest end first. */
const RECENT_LISTED = 100;

export interface Overview {
  /** Per upstream, tasks by status: in flight ones all, ended ones within the window. */
  counts: Record<string, Partial<Record<TaskStatus, number>>>;
  inFlight: Array<Record<string, unknown>>;
  recent: Array<Record<string, unknown>>;
  windowMs: number;
  /** True when there were more tasks than one overview reads. */
  truncated: boolean;
}

/**
 * What the status page shows, from the all-tasks index the admin API lists (newest first): the
 * tasks in flight, the ones that ended within `windowMs` (by their last update), and counts of
 * both per upstream. Bounded work: at most OVERVIEW_MAX_EXAMINED tasks are read.
 */
export async function buildOverview(engine: TaskEngine, windowMs: number, now = Date.now()): Promise<Overview> {
  const overview: Overview = { counts: {}, inFlight: [], recent: [], windowMs, truncated: false };
  const ended: TaskRecord[] = [];
  let cursor: string | undefined;
  for (let examined = 0; examined < OVERVIEW_MAX_EXAMINED; examined += PAGE) {
    const page = await engine.listAll({}, { limit: PAGE, ...(cursor ? { cursor } : {}) });
    if (!page) break;
    for (const task of page.tasks) {
      const terminal = isTerminal(task.status);
      if (terminal && now - task.lastUpdatedAt > windowMs) continue;
      const counts = (overview.counts[task.upstream] ??= {});
      counts[task.status] = (counts[task.status] ?? 0) + 1;
      if (terminal) ended.push(task);
      else overview.inFlight.push(withProgress(task));
    }
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  overview.truncated = cursor !== undefined;
  ended.sort((a, b) => b.lastUpdatedAt - a.lastUpdatedAt);
  overview.recent = ended.slice(0, RECENT_LISTED).map((task) => ({ ...withProgress(task), error: errorOf(task) }));
  return overview;
}

function withProgress(task: TaskRecord): Record<string, unknown> {
  return taskView(task, { progress: true });
}

/** What went wrong, for a failed task: the JSON-RPC error, or the tool's own error text. */
function errorOf(task: TaskRecord): string | null {
  if (task.status !== "failed") return null;
  const outcome = task.outcome;
  if (outcome && "error" in outcome) {
    const { message, code } = outcome.error;
    return message.includes(String(code)) ? message : `${message} (${code})`;
  }
  const content = outcome && "result" in outcome ? (outcome.result.content as Array<{ type?: string; text?: string }> | undefined) : undefined;
  const text = content?.find((c) => c.type === "text")?.text;
  return (text ?? task.statusMessage ?? "failed").slice(0, 500);
}
