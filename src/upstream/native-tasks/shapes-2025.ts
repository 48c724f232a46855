import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import type { UpstreamQuestion, UpstreamTaskState, UpstreamTaskStatus } from "./upstream-tasks.js";

// Wire shapes of the 2025-11-25 tasks utility as an upstream sends them
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): read just
// enough to follow the task; anything malformed reads as "not a task".

export const RELATED_TASK = "io.modelcontextprotocol/related-task";

const STATUSES: ReadonlySet<string> = new Set<UpstreamTaskStatus>(["working", "input_required", "completed", "failed", "cancelled"]);

export function isTerminalStatus(status: UpstreamTaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** A `Task` (tasks/get result, notifications/tasks/status params): its id and state, or undefined. */
export function taskOf(value: unknown): { taskId: string; state: UpstreamTaskState } | undefined {
  if (!isObject(value) || typeof value.taskId !== "string" || typeof value.status !== "string" || !STATUSES.has(value.status)) return undefined;
  const state: UpstreamTaskState = { status: value.status as UpstreamTaskStatus, ttlMs: typeof value.ttl === "number" ? value.ttl : null };
  if (typeof value.statusMessage === "string") state.statusMessage = value.statusMessage;
  if (typeof value.pollInterval === "number" && value.pollInterval > 0) state.pollIntervalMs = value.pollInterval;
  return { taskId: value.taskId, state };
}

/** A `CreateTaskResult` (`{ task }`), or undefined: the upstream answered the call itself. */
export function createdTaskOf(result: Record<string, unknown>): { taskId: string; state: UpstreamTaskState } | undefined {
  return taskOf(result.task);
}

/** The upstream's final result without its related-task `_meta`, which names its own task, not the front's. */
export function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(result._meta) || !Object.hasOwn(result._meta, RELATED_TASK)) return result;
  const { [RELATED_TASK]: _related, ...meta } = result._meta;
  const { _meta: _old, ...rest } = result;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/** A question as the front shows it: without the related-task `_meta` (the front call has its own task, or none). */
export function questionOf(request: JsonRpcRequest): UpstreamQuestion {
  const key = String(request.id);
  if (!request.params) return { key, request: { method: request.method } };
  return { key, request: { method: request.method, params: withoutRelatedTask(request.params) } };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
