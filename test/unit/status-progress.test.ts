import { describe, expect, it } from "vitest";
import { progressOfStatus, statusFromProgress } from "../../src/tasks/status-message.js";

describe("progress for the status page's bars", () => {
  it("writes one message per notification: the upstream's own, else the counts, never both", () => {
    expect(statusFromProgress({ progress: 8, total: 360, message: "long: step 8/360" })).toBe("long: step 8/360");
    expect(statusFromProgress({ progress: 8, total: 360 })).toBe("Progress 8/360");
    expect(statusFromProgress({ progress: 8 })).toBe("Progress 8");
    expect(statusFromProgress({ progress: 8, total: 360, message: "  " })).toBe("Progress 8/360");
    expect(statusFromProgress({ message: "warming up" })).toBe("warming up");
  });

  it("reads back the counts at the end of a message, when there is a total", () => {
    expect(progressOfStatus(statusFromProgress({ progress: 3, total: 5, message: "Running tests 3/5" }))).toEqual({ progress: 3, total: 5 });
    expect(progressOfStatus(statusFromProgress({ progress: 3, total: 5, message: "Running tests" }))).toBeUndefined();
    expect(progressOfStatus("Slept 1/30 s")).toEqual({ progress: 1, total: 30 });
    expect(progressOfStatus("Copying 3/5 files")).toEqual({ progress: 3, total: 5 });
    expect(progressOfStatus("batch 1/2, file 3/5")).toEqual({ progress: 3, total: 5 });
    expect(progressOfStatus(statusFromProgress({ progress: 1.5, total: 2 }))).toEqual({ progress: 1.5, total: 2 });
    expect(progressOfStatus("Slept 1/2 s (1/2)")).toEqual({ progress: 1, total: 2 });
  });

  it("gives none without a total, for free text, or for a zero total, and never more than the total", () => {
    expect(progressOfStatus(statusFromProgress({ progress: 3 }))).toBeUndefined();
    expect(progressOfStatus("Copying files")).toBeUndefined();
    expect(progressOfStatus("built 2026/12/06")).toBeUndefined();
    expect(progressOfStatus(undefined)).toBeUndefined();
    expect(progressOfStatus("Progress 1/0")).toBeUndefined();
    expect(progressOfStatus("Progress 7/5")).toEqual({ progress: 5, total: 5 });
  });
});
