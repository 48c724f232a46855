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

/**
 * Terminal statuses live with the store's checks (store/task-rules.ts), which the Redis scripts
 * are built from too: the one `isTerminal`. This table's terminal rows (no way out) must name the
 * same statuses; test/unit/transitions.test.ts pins it.
 */
export { isTerminal } from "../store/task-rules.js";

export const NON_TERMINAL: readonly TaskStatus[] = ["working", "input_required"];

/** The statuses a task may be in for a move to `to`. */
export function allowedFrom(to: TaskStatus): TaskStatus[] {
  return (Object.keys(TRANSITIONS) as TaskStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}
