import { describe, expect, it } from "vitest";
import { Backoff } from "../../src/upstream/backoff.js";
import { backoffDelayMs } from "../../src/util/backoff.js";

describe("the one backoff", () => {
  it("starts at the initial delay, doubles, and stops at the maximum", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, 50, 1_000))).toEqual([50, 100, 200, 400, 800, 1_000]);
    expect(backoffDelayMs(40, 50, 1_000)).toBe(1_000);
  });

  it("grows from nothing too, when the initial delay is 0", () => {
    expect([1, 2, 3].map((n) => backoffDelayMs(n, 0, 100))).toEqual([0, 2, 4]);
  });

  it("jitters an upstream's restart delays down by at most a fifth, and starts over after reset", () => {
    const backoff = new Backoff(100, 400);
    const delays = [backoff.next(), backoff.next(), backoff.next(), backoff.next()];
    [100, 200, 400, 400].forEach((base, i) => expect(delays[i]).toBeGreaterThanOrEqual(base * 0.8));
    [100, 200, 400, 400].forEach((base, i) => expect(delays[i]).toBeLessThanOrEqual(base));
    backoff.reset();
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});
