import type { TaskChange, TaskStatus } from "./contract.js";

/**
 * The checks every task change makes, shared by both stores: memory calls these functions, and
 * the Redis scripts make the same checks inside Lua (atomically), built from the same constants.
 * Which transitions are allowed is not decided here: callers pass `from` from the one table.
 */

/** Statuses a task never leaves (design: State). */
export const TERMINAL_STATUSES = ["completed", "failed", "cancelled"] as const satisfies readonly TaskStatus[];

export function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

export type Refusal = "not_found" | "stale_lease" | "wrong_status";

/** What a check needs to know of the stored task. */
export interface StoredTaskView {
  status: TaskStatus;
  principal: string;
}

/** True when `principal` (null = any, for operators) may see the task. */
export function visibleTo(task: StoredTaskView, principal: string | null | undefined): boolean {
  return principal === null || principal === undefined || task.principal === principal;
}

/**
 * Why `change` may not apply, in the order the checks run (transition-task-3 keeps the same
 * order): a missing task or another principal's reads alike; then the lease fence; then the
 * status — a terminal task refuses every change, even to the status it already has.
 */
export function refuseChange(
  task: StoredTaskView | undefined,
  leaseHolder: string | undefined,
  change: Pick<TaskChange, "from" | "principal" | "leaseToken">,
): Refusal | undefined {
  if (!task || !visibleTo(task, change.principal)) return "not_found";
  if (change.leaseToken !== undefined && leaseHolder !== change.leaseToken) return "stale_lease";
  if (isTerminal(task.status) || !change.from.includes(task.status)) return "wrong_status";
  return undefined;
}

/**
 * Both stores refuse the same malformed calls. An empty principal or token would mean "not
 * given" to the Redis scripts, so it is a caller's bug, never a value.
 */
export function assertChange(change: TaskChange): void {
  if (change.principal === "") throw new RangeError("principal must not be empty");
  if (change.leaseToken === "") throw new RangeError("leaseToken must not be empty");
  if (change.ttlMs !== undefined && (!Number.isSafeInteger(change.ttlMs) || change.ttlMs <= 0)) throw new RangeError(`ttlMs must be a positive integer, got ${String(change.ttlMs)}`);
  assertEpochMs(change.now, "now");
}

/** Only `null` means any principal: an empty one would read every task through the scripts. */
export function assertPrincipal(principal: string | null): void {
  if (principal === "") throw new RangeError("principal must not be empty");
}

export function assertToken(token: string): void {
  if (token === "") throw new RangeError("lease token must not be empty");
}

export function assertEpochMs(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be epoch milliseconds, got ${String(value)}`);
}

/** Task ids are random (design: Security); a second create with one is a defect, not a retry. */
export function taskExistsError(id: string): Error {
  return new Error(`a task with id ${id} exists already`);
}
