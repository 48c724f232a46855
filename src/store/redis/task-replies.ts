import type { TaskRecord, TransitionResult } from "../contract.js";
import { decodeTask } from "../task-fields.js";
import type { Refusal } from "../task-rules.js";

/**
 * Reading what the task scripts return. Their codes (lua/common.ts) are read in one place,
 * `readCode`; an unknown one is a defect in a script and throws.
 */
export type Code = "ok" | Refusal | "exists";

const NEGATIVE: Record<number, Exclude<Code, "ok">> = {
  [-1]: "not_found",
  [-2]: "stale_lease",
  [-3]: "wrong_status",
  [-4]: "exists",
};

/** `expected` lists the codes this script may return; anything else throws. */
export function readCode(script: string, reply: unknown, expected: readonly Code[]): Code {
  const code = array(reply)[0];
  const read = typeof code === "number" ? (code > 0 ? "ok" : NEGATIVE[code]) : undefined;
  if (read === undefined || !expected.includes(read)) {
    throw new Error(`${script} returned an unexpected code: ${JSON.stringify(code)}`);
  }
  return read;
}

/** HGETALL pairs plus the outcome JSON ('' = none), as the scripts return them. */
export function taskOf(pairs: unknown, outcome: unknown): TaskRecord {
  if (typeof outcome !== "string") throw new Error("a task script returned no outcome slot");
  return decodeTask(toMap(strings(pairs)), outcome === "" ? null : outcome);
}

/** The transition scripts (lua/transitions.ts) and the reaper's (end-orphan-3, claim-orphan-3): {code, fields, outcome}. */
export function transitionResult(reply: unknown, script: string): TransitionResult {
  const read = readCode(script, reply, ["ok", "not_found", "stale_lease", "wrong_status"]);
  if (read === "not_found") return { ok: false, reason: read };
  const [, pairs, outcome] = array(reply);
  const task = taskOf(pairs, outcome);
  return read === "ok" ? { ok: true, task } : { ok: false, reason: read as "stale_lease" | "wrong_status", task };
}

/** key, JSON, key, JSON ... to the parsed answers by key. */
export function answersOf(pairs: unknown): Record<string, unknown> {
  const answers: Record<string, unknown> = {};
  for (const [key, json] of toMap(strings(pairs))) answers[key] = JSON.parse(json) as unknown;
  return answers;
}

export function array(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw new Error(`a task script returned ${JSON.stringify(reply)}, not an array`);
  return reply as unknown[];
}

export function strings(reply: unknown): string[] {
  const items = array(reply);
  if (!items.every((item) => typeof item === "string")) throw new Error("a task script returned a non-string field");
  return items as string[];
}

function toMap(flat: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as string, flat[i + 1] as string);
  return map;
}
