import { GatewayError } from "../wire/errors.js";
import type { JsonRpcRequest } from "../jsonrpc/message.js";

/** The task a tasks/* request names; both task protocols refuse anything but a non-empty string alike. */
export function taskIdOf(request: JsonRpcRequest): string {
  const taskId = request.params?.taskId;
  if (typeof taskId !== "string" || taskId.length === 0) throw new GatewayError("invalid_params", "params.taskId must be a string");
  return taskId;
}

/** Unknown, expired and another principal's task: one answer, from one lookup (design: Security). */
export function found<T>(value: Promise<T | undefined>): Promise<T> {
  return value.then(present);
}

/** found() on a value already read: the task, or the "not found" answer thrown. */
export function present<T>(v: T | undefined): T {
  if (v === undefined) throw new GatewayError("task_not_found");
  return v;
}
