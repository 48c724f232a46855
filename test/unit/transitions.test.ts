import { describe, expect, it } from "vitest";
import { TERMINAL_STATUSES, TRANSITION_RULES } from "../../src/store/task-rules.js";
import { allowedFrom, isTerminal, NON_TERMINAL, TRANSITIONS } from "../../src/tasks/transitions.js";

describe("the transition table", () => {
  it("lets non-terminal tasks move and terminal ones never", () => {
    expect(allowedFrom("working").sort()).toEqual(["input_required"]);
    expect(allowedFrom("completed").sort()).toEqual(["input_required", "working"]);
    expect(allowedFrom("input_required")).toEqual(["working"]);
    for (const s of ["completed", "failed", "cancelled"] as const) {
      expect(isTerminal(s)).toBe(true);
      expect(TRANSITIONS[s]).toEqual([]);
    }
  });

  it("names as terminal exactly the statuses the stores and their scripts treat as terminal", () => {
    const noWayOut = (Object.keys(TRANSITIONS) as (keyof typeof TRANSITIONS)[]).filter((s) => TRANSITIONS[s].length === 0);
    expect(noWayOut.sort()).toEqual([...TERMINAL_STATUSES].sort());
    expect(NON_TERMINAL.every((s) => !isTerminal(s))).toBe(true);
  });

  it("lets each named transition start only where the table allows its move, or where it keeps the status", () => {
    for (const [kind, rule] of Object.entries(TRANSITION_RULES)) {
      expect(rule.from.length, kind).toBeGreaterThan(0);
      for (const from of rule.from) {
        expect(isTerminal(from), `${kind} from ${from}`).toBe(false);
        if (rule.to !== undefined && rule.to !== from) expect(TRANSITIONS[from], `${kind} from ${from}`).toContain(rule.to);
      }
    }
  });
});
