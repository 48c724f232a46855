import type { TaskRecord, TaskView } from "../../store/contract.js";
import { RPC } from "../../jsonrpc/codes.js";
import { withFields } from "../../util/with-fields.js";

/**
 * The tasks extension shapes (ext-tasks schema, https://github.com/modelcontextprotocol/ext-tasks/blob/main/schema/draft/schema.ts): flat tasks, `ttlMs` / `pollIntervalMs` as
 * integers, and no legacy `ttl` / `pollInterval` keys.
 */
export function taskFields(task: TaskView, fields: Record<string, unknown> = {}): Record<string, unknown> {
  fields.taskId = task.id;
  fields.status = task.status;
  fields.createdAt = new Date(task.createdAt).toISOString();
  fields.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  fields.ttlMs = task.ttlMs;
  fields.pollIntervalMs = task.pollIntervalMs;
  if (task.statusMessage !== undefined) fields.statusMessage = task.statusMessage;
  return fields;
}

/** `CreateTaskResult`: `resultType: "task"`, flat (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md). */
export function createTaskResult(task: TaskRecord): Record<string, unknown> {
  return { resultType: "task", ...taskFields(task) };
}

/**
 * The `DetailedTask` for the task's status, as `tasks/get` and `notifications/tasks` carry it.
 * A completed task's `result` is what the call would have returned on this wire, so it carries
 * `resultType: "complete"` too.
 */
export function detailedTask(task: TaskView, into: Record<string, unknown> = {}): Record<string, unknown> {
  const fields = taskFields(task, into);
  if (task.status === "input_required") fields.inputRequests = task.inputRequests;
  if (task.status === "completed" && task.outcome && "result" in task.outcome) fields.result = withFields(task.outcome.result, { resultType: "complete" });
  if (task.status === "failed")
    fields.error =
      task.outcome && "error" in task.outcome ? task.outcome.error : { code: RPC.INTERNAL_ERROR, message: task.statusMessage ?? "The task failed" };
  return fields;
}

/** `tasks/get`: `resultType` MUST be "complete" (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md; the schema and conformance agree, where the spec leaves it open). */
export function getTaskResult(task: TaskView): Record<string, unknown> {
  return detailedTask(task, { resultType: "complete" });
}
