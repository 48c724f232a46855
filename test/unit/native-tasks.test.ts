import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.js";
import { bindingOf } from "../../src/tasks/native/binding.js";
import { callerFor, toolPolicy } from "../../src/tasks/policy.js";
import { createdTaskOf, questionOf, taskOf, withoutRelatedTask } from "../../src/upstream/native-tasks/shapes-2025.js";

const RELATED = "io.modelcontextprotocol/related-task";

function config(upstream: Record<string, unknown> = {}) {
  return ConfigSchema.parse({ upstreams: [{ http: { url: "http://up.example/mcp" }, ...upstream }] });
}

describe("the policy of a tool the upstream runs as a task of its own", () => {
  it("makes a tool the upstream requires required and always native, unless the config sets its taskSupport", () => {
    const c = config({ tools: { relaxed: { taskSupport: "optional" } } });
    const u = c.upstreams[0]!;
    expect(toolPolicy(c.tasks, u, "research", "required")).toMatchObject({ taskSupport: "required", native: "always", requiredByUpstream: true });
    expect(toolPolicy(c.tasks, u, "relaxed", "required")).toMatchObject({ taskSupport: "optional", native: "always" });
    expect(toolPolicy(c.tasks, u, "relaxed", "required")).not.toHaveProperty("requiredByUpstream");
  });

  it("calls an optional tool as the upstream's task only when the front call is a task, and never with nativeTasks off", () => {
    const c = config({ tools: { plain: { nativeTasks: "off" } } });
    const u = c.upstreams[0]!;
    const optional = toolPolicy(c.tasks, u, "tally", "optional");
    expect(optional).toMatchObject({ taskSupport: "optional", native: "task" });
    expect(callerFor(optional, true, "bridge", "relay")).toBe("bridge");
    expect(callerFor(optional, false, "bridge", "relay")).toBe("relay");
    expect(toolPolicy(c.tasks, u, "plain", "optional")).not.toHaveProperty("native");
    const off = config({ nativeTasks: "off", tools: { on: { nativeTasks: "auto" } } });
    expect(toolPolicy(off.tasks, off.upstreams[0]!, "tally", "optional")).not.toHaveProperty("native");
    expect(toolPolicy(off.tasks, off.upstreams[0]!, "on", "optional")).toMatchObject({ native: "task" });
  });

  it("keeps today's policy for a tool the upstream forbids tasks for or says nothing about", () => {
    const c = config();
    const policy = toolPolicy(c.tasks, c.upstreams[0]!, "echo", undefined);
    expect(policy).toEqual({ taskSupport: "optional", detachAfterMs: 3000, unawareClients: "block" });
    expect(callerFor(policy, true, "bridge", "relay")).toBe("relay");
  });

  it("defaults nativeTasks to auto and refuses other values", () => {
    expect(config().upstreams[0]!.nativeTasks).toBe("auto");
    expect(() => config({ nativeTasks: "sometimes" })).toThrow();
  });
});

describe("binding a front task to the upstream's task", () => {
  const front = { createdAt: 1_000_000, ttlMs: 3_600_000 };

  it("cuts the front TTL so it ends no later than the upstream's, counted from when taskgate asked", () => {
    expect(bindingOf(front, { taskId: "u1", session: "s1", ttlMs: 300_000, askedAt: 1_000_050 })).toEqual({
      ref: { taskId: "u1", session: "s1" },
      ttlMs: 300_050,
    });
    // Asked before the front task existed (a call that detached later): shorter still.
    expect(bindingOf(front, { taskId: "u1", ttlMs: 300_000, askedAt: 999_000 })).toEqual({ ref: { taskId: "u1" }, ttlMs: 299_000 });
  });

  it("never lengthens it, and keeps it for an unlimited upstream task", () => {
    expect(bindingOf(front, { taskId: "u1", ttlMs: 86_400_000, askedAt: 1_000_000 })).toEqual({ ref: { taskId: "u1" } });
    expect(bindingOf(front, { taskId: "u1", ttlMs: null, askedAt: 1_000_000 })).toEqual({ ref: { taskId: "u1" } });
  });

  it("ignores a notice without a task id", () => {
    expect(bindingOf(front, { ttlMs: 1 })).toBeUndefined();
    expect(bindingOf(front, { taskId: "" })).toBeUndefined();
  });
});

describe("2025-11-25 shapes read from an upstream", () => {
  it("reads a CreateTaskResult and a Task, and nothing malformed", () => {
    const task = { taskId: "t1", status: "working", ttl: 60_000, pollInterval: 500, createdAt: "x", lastUpdatedAt: "x", statusMessage: "go" };
    expect(createdTaskOf({ task })).toEqual({ taskId: "t1", state: { status: "working", ttlMs: 60_000, pollIntervalMs: 500, statusMessage: "go" } });
    expect(taskOf({ ...task, ttl: null })?.state.ttlMs).toBeNull();
    expect(createdTaskOf({ content: [] })).toBeUndefined();
    expect(taskOf({ taskId: "t1", status: "sleeping" })).toBeUndefined();
  });

  it("drops the upstream's related-task _meta from a result and a question, keeping the rest", () => {
    expect(withoutRelatedTask({ content: [], _meta: { [RELATED]: { taskId: "u" } } })).toEqual({ content: [] });
    expect(withoutRelatedTask({ content: [], _meta: { [RELATED]: { taskId: "u" }, other: 1 } })).toEqual({ content: [], _meta: { other: 1 } });
    const result = { content: [{ type: "text", text: "x" }] };
    expect(withoutRelatedTask(result)).toBe(result);
    const question = questionOf({ jsonrpc: "2.0", id: "q-1", method: "elicitation/create", params: { message: "ok?", _meta: { [RELATED]: { taskId: "u" } } } });
    expect(question).toEqual({ key: "q-1", request: { method: "elicitation/create", params: { message: "ok?" } } });
  });
});
