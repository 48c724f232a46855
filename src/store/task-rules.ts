import type { TaskChange, TaskStatus } from "./contract.js";

/**
 * The rules every task change keeps, shared by both stores: memory calls these functions, and
 * each Redis script (redis/lua/) is built from the same constants, so the Lua and the TypeScript
 * name the same statuses. The one transition table is here (src/tasks/transitions.ts shows it to
 * the engine), and so is the rule of each named transition: which statuses it may start from.
 */

/** Statuses a task never leaves (design: State). */
export const TERMINAL_STATUSES = ["completed", "failed", "cancelled"] as const satisfies readonly TaskStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

/**
 * The allowed status transitions, the only table (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks,
 * Task Status; the same for both task protocols).
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ["input_required", "completed", "failed", "cancelled"],
  input_required: ["working", "completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};

export const NON_TERMINAL: readonly TaskStatus[] = ["working", "input_required"];

/** The statuses a task may be in for a move to `to`. */
export function allowedFrom(to: TaskStatus): TaskStatus[] {
  return (Object.keys(TRANSITIONS) as TaskStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}

/** What a named transition may start from, and the status it moves to (none: the status stays). */
export interface TransitionRule {
  readonly from: readonly TaskStatus[];
  readonly to?: TaskStatus;
}

/**
 * The named transitions, each one Redis script of the same name (redis/lua/), which checks
 * its own `from` inside Lua. Those that keep the status may run in any non-terminal one.
 */
export const TRANSITION_RULES: Readonly<Record<TaskChange["kind"], TransitionRule>> = {
  // A question moves a working task to input_required; another one may come while it waits.
  "start-input": { from: [...allowedFrom("input_required"), "input_required"], to: "input_required" },
  "withdraw-input": { from: NON_TERMINAL },
  "set-status-message": { from: NON_TERMINAL },
  "bind-upstream-task": { from: NON_TERMINAL },
  "bind-stream": { from: NON_TERMINAL },
  // Only a working parked call detaches: one with a question out waits for its answer first.
  detach: { from: ["working"] },
  queue: { from: NON_TERMINAL },
  "start-queued": { from: NON_TERMINAL },
  "request-cancel": { from: NON_TERMINAL },
  complete: { from: allowedFrom("completed"), to: "completed" },
  fail: { from: allowedFrom("failed"), to: "failed" },
  cancel: { from: allowedFrom("cancelled"), to: "cancelled" },
};

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
 * Why `change` may not apply, in the order the checks run (every transition script keeps the same
 * order, lua/common.ts `refusal`): a missing task or another principal's reads alike; then the
 * lease fence; then the status — a terminal task refuses every change, even to the status it
 * already has, and each transition starts only from the statuses its rule names.
 */
export function refuseChange(
  task: StoredTaskView | undefined,
  leaseHolder: string | undefined,
  change: Pick<TaskChange, "kind" | "principal" | "leaseToken">,
): Refusal | undefined {
  if (!task || !visibleTo(task, change.principal)) return "not_found";
  if (change.leaseToken !== undefined && leaseHolder !== change.leaseToken) return "stale_lease";
  if (isTerminal(task.status) || !TRANSITION_RULES[change.kind].from.includes(task.status)) return "wrong_status";
  return undefined;
}

/**
 * Both stores refuse the same malformed calls. An empty principal or token would mean "not
 * given" to the Redis scripts, so it is a caller's bug, never a value.
 */
export function assertChange(change: TaskChange): void {
  if (change.principal === "") throw new RangeError("principal must not be empty");
  if (change.leaseToken === "") throw new RangeError("leaseToken must not be empty");
  const ttlMs = "ttlMs" in change ? change.ttlMs : undefined;
  if (ttlMs !== undefined && (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)) throw new RangeError(`ttlMs must be a positive integer, got ${String(ttlMs)}`);
  assertEpochMs(change.now, "now");
}

/** Only `null` means any principal: an empty one would read every task through the scripts. */
export function assertPrincipal(principal: string | null): void {
  if (principal === "") throw new RangeError("principal must not be empty");
}

export function assertToken(token: string): void {
  if (token === "") throw new RangeError("lease token must not be empty");
  // It names a key of its own in Redis (the tasks held under it): a brace would make it a hash tag.
  if (/[{}]/.test(token)) throw new RangeError("lease token must not contain braces");
}

export function assertEpochMs(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be epoch milliseconds, got ${String(value)}`);
}

/** Task ids are random (design: Security); a second create with one is a defect, not a retry. */
export function taskExistsError(id: string): Error {
  return new Error(`a task with id ${id} exists already`);
}
