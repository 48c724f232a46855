import { describe, expect, it } from "vitest";
import { allowedFrom, isTerminal, TRANSITIONS } from "../../src/tasks/transitions.js";

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
});
