import { describe, expect, it } from "vitest";
import { CROWDED_MS, CROWDED_WAITING_PER_PROCESS, GrowthRule, STALL_MS } from "../../src/upstream/mux/pool-growth.js";

/** Returns at a steady pace over `ms`, each finding `waiting` calls queued and `inUse` processes out. */
function steady(rule: GrowthRule, from: number, ms: number, waiting: number, inUse: number): boolean[] {
  const decisions: boolean[] = [];
  for (let t = from; t <= from + ms; t += 5) decisions.push(rule.returned(t, waiting, inUse));
  return decisions;
}

describe("when a process pool grows", () => {
  it("grows for a steady load that queues calls behind every process, once per window", () => {
    const rule = new GrowthRule();
    const decisions = steady(rule, 1_000, CROWDED_MS * 2, 2 * CROWDED_WAITING_PER_PROCESS, 2);
    expect(decisions.filter(Boolean)).toHaveLength(2);
    expect(decisions.indexOf(true)).toBe(CROWDED_MS / 5);
  });

  it("does not grow where fewer calls wait per process in use", () => {
    const rule = new GrowthRule();
    expect(steady(rule, 1_000, CROWDED_MS * 4, 4 * CROWDED_WAITING_PER_PROCESS - 1, 4).some(Boolean)).toBe(false);
  });

  it("does not grow for a burst shorter than its window, nor on a later lone return", () => {
    const rule = new GrowthRule();
    expect(steady(rule, 1_000, CROWDED_MS / 2, 20, 1).some(Boolean)).toBe(false);
    // Long after the burst: its window is stale and starts afresh.
    expect(rule.returned(1_000 + CROWDED_MS * 5, 1, 1)).toBe(false);
  });

  it("weighs the whole window: a queue that mostly stays short does not grow the pool", () => {
    const rule = new GrowthRule();
    const decisions: boolean[] = [];
    for (let t = 0; t <= CROWDED_MS; t += 5) decisions.push(rule.returned(t, t % 100 === 0 ? 20 : 0, 2));
    expect(decisions.some(Boolean)).toBe(false);
  });

  it("measures afresh after growing", () => {
    const rule = new GrowthRule();
    steady(rule, 0, CROWDED_MS / 2, 6, 2);
    rule.grew();
    expect(steady(rule, CROWDED_MS / 2 + 5, CROWDED_MS - 10, 20, 2).some(Boolean)).toBe(false);
  });

  it("counts a waiting call as stalled once no process came back for STALL_MS", () => {
    const rule = new GrowthRule();
    rule.returned(1_000, 0, 1);
    expect(rule.stallDueInMs(1_000, 1_000)).toBe(STALL_MS);
    expect(rule.stallDueInMs(1_000 + STALL_MS / 2, 1_000 + STALL_MS / 4)).toBe(STALL_MS * 0.75);
    expect(rule.stallDueInMs(1_000 + STALL_MS * 2, 1_000)).toBe(0);
  });
});
