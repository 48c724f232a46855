import { describe, expect, it } from "vitest";
import { median, stretchesOf } from "../../bench/lib/timeline.js";

type Event = [string, number];

describe("bench timeline: a call's stretches from its stamps", () => {
  it("splits each call at the relay's writes and reads and the upstream's request and reply", () => {
    const relay: Event[] = [
      ["req", 0],
      ["wu", 10],
      ["ru", 100],
      ["wc", 130],
      ["req", 200],
      ["wu", 212],
      ["ru", 330],
      ["wc", 350],
    ];
    const upstream: Event[] = [
      ["req", 20],
      ["wc", 80],
      ["req", 230],
      ["wc", 310],
    ];
    expect(stretchesOf(relay, upstream)).toEqual([
      { before: 10, toUpstream: 10, upstream: 60, back: 20, after: 30 },
      { before: 12, toUpstream: 18, upstream: 80, back: 20, after: 20 },
    ]);
  });

  it("leaves out a call the relay did not answer before its next request", () => {
    const relay: Event[] = [
      ["req", 0],
      ["wu", 10],
      ["req", 50],
      ["wu", 55],
      ["ru", 90],
      ["wc", 95],
    ];
    const upstream: Event[] = [
      ["req", 60],
      ["wc", 80],
    ];
    expect(stretchesOf(relay, upstream)).toEqual([{ before: 5, toUpstream: 5, upstream: 20, back: 10, after: 5 }]);
  });

  it("reads a stdio upstream's request as its stdin read and its reply as its stdout write", () => {
    const relay: Event[] = [
      ["req", 0],
      ["wu", 10],
      ["ru", 60],
      ["wc", 70],
    ];
    const upstream: Event[] = [
      ["ru", 15],
      ["wu", 50],
    ];
    expect(stretchesOf(relay, upstream, "stdio")).toEqual([{ before: 10, toUpstream: 5, upstream: 35, back: 10, after: 10 }]);
    expect(stretchesOf(relay, upstream, "http")).toEqual([]);
  });

  it("takes the middle value, the upper one of an even count", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(median([])).toBeNaN();
  });
});
