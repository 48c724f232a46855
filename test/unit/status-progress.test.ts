import { describe, expect, it } from "vitest";
import { progressOfStatus, statusFromProgress } from "../../src/tasks/status-message.js";

describe("progress for the status page's bars", () => {
  it("reads back the counts statusFromProgress wrote, when there is a total", () => {
    expect(progressOfStatus(statusFromProgress({ progress: 3, total: 5, message: "Running tests" }))).toEqual({ progress: 3, total: 5 });
    expect(progressOfStatus(statusFromProgress({ progress: 1.5, total: 2 }))).toEqual({ progress: 1.5, total: 2 });
    expect(progressOfStatus("Slept 1/2 s (1/2)")).toEqual({ progress: 1, total: 2 });
  });

  it("gives none without a total, for free text, or for a zero total, and never more than the total", () => {
    expect(progressOfStatus(statusFromProgress({ progress: 3 }))).toBeUndefined();
    expect(progressOfStatus("Copying 3/5 files")).toBeUndefined();
    expect(progressOfStatus(undefined)).toBeUndefined();
    expect(progressOfStatus("Progress 1/0")).toBeUndefined();
    expect(progressOfStatus("Progress 7/5")).toEqual({ progress: 5, total: 5 });
  });
});
