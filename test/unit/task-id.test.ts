import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/tasks/task-id.js";

describe("task ids", () => {
  it("carry 128 random bits after a time prefix, and never repeat", () => {
    const ids = Array.from({ length: 2000 }, () => newTaskId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9A-Z]{10}[A-Za-z0-9_-]{22}$/);
    // Same instant, so only the random part differs: its 22 base64url characters are 132 bits of which 128 are random.
    const randomParts = new Set(ids.map((id) => id.slice(10)));
    expect(randomParts.size).toBe(ids.length);
  });

  it("sort by creation time", () => {
    expect(newTaskId(1_000) < newTaskId(2_000_000_000_000)).toBe(true);
  });
});

describe("task ids at scale", () => {
  it("give 100,000 ids without a collision, each with 128 bits from the CSPRNG (≥ 122 required)", () => {
    const ids = Array.from({ length: 100_000 }, () => newTaskId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    // By construction: after the 10-character time prefix, the id is 16 random bytes, base64url.
    const bytes = ids.map((id) => Buffer.from(id.slice(10), "base64url"));
    for (const b of bytes) expect(b.length * 8).toBeGreaterThanOrEqual(122);
    // Every one of the 128 bit positions takes both values: no bit is fixed or derived from a counter.
    const seenOne = new Uint8Array(16);
    const seenZero = new Uint8Array(16);
    for (const b of bytes)
      for (let i = 0; i < 16; i++) {
        seenOne[i]! |= b[i]!;
        seenZero[i]! |= ~b[i]! & 0xff;
      }
    expect([...seenOne]).toEqual(new Array(16).fill(0xff));
    expect([...seenZero]).toEqual(new Array(16).fill(0xff));
  });
});
