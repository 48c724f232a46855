import type { TaskStatus } from "../store/contract.js";

/**
 * The allowed status transitions, the only table (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Task Status; the same for both dialects).
 * Stores receive the "from" lists computed here; they never decide on their own.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ["input_required", "completed", "failed", "cancelled"],
  input_required: ["working", "completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};

export const NON_TERMINAL: readonly TaskStatus[] = ["working", "input_required"];

export function isTerminal(status: TaskStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

/** The statuses a task may be in for a move to `to`. */
export function allowedFrom(to: TaskStatus): TaskStatus[] {
  return (Object.keys(TRANSITIONS) as TaskStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}
