import { describe, expect, it } from "vitest";
import type { TaskProtocol } from "../../src/store/contract.js";
import { decodeTask, newTaskFields } from "../../src/store/task-fields.js";
import { newTask } from "../contract/task-store.contract.js";

/** The stored codes every release has written: replicas of two versions share one store during a rolling upgrade. */
const STORED: [TaskProtocol, string][] = [
  ["2025-11-25", "A"],
  ["extension", "B"],
  ["none", "U"],
];

describe("a task's protocol in the store", () => {
  it.each(STORED)("writes %s as the stored code %s under the field `dialect`", (taskProtocol, code) => {
    const fields = new Map(newTaskFields(newTask({ taskProtocol })));
    expect(fields.get("dialect")).toBe(code);
    expect(fields.has("taskProtocol")).toBe(false);
  });

  it.each(STORED)("reads %s from a task whose hash holds `dialect: %s`, as an earlier version wrote it", (taskProtocol, code) => {
    const fields = new Map(newTaskFields(newTask({ taskProtocol: "extension" })));
    fields.set("dialect", code);
    const task = decodeTask(fields, null);
    expect(task.taskProtocol).toBe(taskProtocol);
    expect(task).not.toHaveProperty("dialect");
  });

  it("refuses a stored code it does not know", () => {
    const fields = new Map(newTaskFields(newTask()));
    fields.set("dialect", "extension");
    expect(() => decodeTask(fields, null)).toThrow();
  });
});

describe("reading a stored task", () => {
  it("refuses a task whose counters are not integers", () => {
    const fields = new Map(newTaskFields(newTask()));
    fields.set("createdAt", "12.5");
    expect(() => decodeTask(fields, null)).toThrow(/createdAt/);
  });

  it("refuses an outcome that is neither a result object nor an error", () => {
    const fields = new Map(newTaskFields(newTask()));
    expect(() => decodeTask(fields, JSON.stringify({ result: [1] }))).toThrow(/outcome/);
    expect(() => decodeTask(fields, JSON.stringify({ error: { code: "x", message: "m" } }))).toThrow(/outcome/);
  });

  it("keeps a stored outcome's result or error and nothing beside it", () => {
    const fields = new Map(newTaskFields(newTask()));
    expect(decodeTask(fields, JSON.stringify({ result: { content: [] }, extra: 1 })).outcome).toStrictEqual({ result: { content: [] } });
    const failed = decodeTask(fields, JSON.stringify({ error: { code: -32000, message: "m", data: null, extra: 1 } })).outcome;
    expect(failed).toStrictEqual({ error: { code: -32000, message: "m", data: null } });
  });

  it("reads a task written before attempts were counted as its first attempt", () => {
    const fields = new Map(newTaskFields(newTask()));
    fields.delete("attempt");
    expect(decodeTask(fields, null).attempt).toBe(1);
  });
});
