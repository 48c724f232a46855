import type { TaskView } from "../../store/contract.js";

export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** The 2025-11-25 tasks' `Task` (2025-11-25 schema, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): `ttl` and `pollInterval`, always `ttl`. */
export function taskA(task: TaskView): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    taskId: task.id,
    status: task.status,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttl: task.ttlMs,
    pollInterval: task.pollIntervalMs,
  };
  if (task.statusMessage !== undefined) fields.statusMessage = task.statusMessage;
  return fields;
}

/** The capability taskgate declares in a 2025-11-25 session (the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks). */
export const TASKS_2025_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
