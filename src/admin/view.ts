import type { TaskRecord } from "../store/contract.js";
import { progressOfStatus } from "../tasks/status-message.js";

/** A task as the admin API shows it: what an operator needs, times in ISO 8601. */
export function taskView(task: TaskRecord, { detail = false, progress = false } = {}): Record<string, unknown> {
  const view: Record<string, unknown> = {
    taskId: task.id,
    status: task.status,
    statusMessage: task.statusMessage ?? null,
    upstream: task.upstream,
    tool: task.tool,
    taskProtocol: task.taskProtocol,
    principal: task.principal,
    owner: task.owner,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: task.ttlMs,
    cancelRequested: task.cancelRequested,
    inputRequests: Object.keys(task.inputRequests),
  };
  // For a progress bar: the counts in statusMessage, when the upstream sent a total.
  if (progress) view.progress = progressOfStatus(task.statusMessage) ?? null;
  // The outcome may be large and hold the tool's output: only on the one-task view.
  if (detail && task.outcome) view.outcome = task.outcome;
  return view;
}
