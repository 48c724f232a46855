import type { RawConfig } from "./file.js";

/**
 * A key an earlier version accepted that this one no longer does: the file then fails naming it
 * and what replaced it, never with a bare "unknown key" (docs/operations/upgrading.md).
 * `path` is dotted; `*` stands for any entry of a list (`upstreams.*.stdio.cwd`).
 */
export interface RetiredKey {
  path: string;
  /** The key to write instead, when one replaces it. */
  replacement?: string;
  /** What else to know: how values changed, or what to do when nothing replaces it. */
  note?: string;
  /** The first version that refuses it. */
  since: string;
}

/** Every key retired so far; a change that renames or drops a setting adds its line here. */
export const RETIRED_KEYS: readonly RetiredKey[] = [];

/** `path: ...` problems for the retired keys `raw` still sets, in the table's order. */
export function retiredKeyProblems(raw: RawConfig, retired: readonly RetiredKey[] = RETIRED_KEYS): string[] {
  return retired.flatMap((key) =>
    found(raw, key.path.split(".")).map((path) =>
      [`${path}: retired in taskgate ${key.since}`, key.replacement && `use ${key.replacement} instead`, key.note].filter(Boolean).join("; "),
    ),
  );
}

/** The concrete paths (list indexes filled in) where `parts` is set in `value`. */
function found(value: unknown, parts: readonly string[], at: readonly string[] = []): string[] {
  if (parts.length === 0) return [at.join(".")];
  const [head, ...rest] = parts as [string, ...string[]];
  if (head === "*") return Array.isArray(value) ? value.flatMap((v, i) => found(v, rest, [...at, String(i)])) : [];
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, head)) return [];
  return found((value as Record<string, unknown>)[head], rest, [...at, head]);
}
