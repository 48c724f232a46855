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
