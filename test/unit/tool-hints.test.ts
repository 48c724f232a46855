import { describe, expect, it } from "vitest";
import type { JsonRpcRequest, JsonRpcResponse } from "../../src/jsonrpc/message.js";
import { policyOf } from "../../src/tasks/policy.js";
import { ToolHints } from "../../src/tasks/tool-hints.js";
import type { UpstreamCaller } from "../../src/upstream/caller.js";
import type { UpstreamTasks } from "../../src/upstream/native-tasks/upstream-tasks.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { Tasks2025 } from "../../src/upstream/native-tasks/tasks-2025.js";

/** An upstream whose tools/list is answered when the test says, counting the reads. */
function listing(tools: Array<Record<string, unknown>>) {
  const waiting: Array<() => void> = [];
  let reads = 0;
  const caller = {
    call: (_client: unknown, request: JsonRpcRequest) => {
      reads++;
      return new Promise<JsonRpcResponse>((resolve) => waiting.push(() => resolve({ jsonrpc: "2.0", id: request.id, result: { tools } })));
    },
  } as unknown as UpstreamCaller;
  return {
    caller,
    reads: () => reads,
    answer: async () => {
      for (const go of waiting.splice(0)) go();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe("a tool's task support known without waiting", () => {
  it("is unknown until the list has come, then known while it is fresh, and unknown again once stale", async () => {
    let now = 1_000_000;
    const upstream = listing([{ name: "slow", execution: { taskSupport: "required" } }, { name: "echo" }]);
    const hints = new ToolHints(upstream.caller, () => now);
    expect(hints.taskSupportNow("slow")).toBe("unknown");
    const asked = hints.taskSupport("slow");
    expect(hints.taskSupportNow("slow")).toBe("unknown");
    await upstream.answer();
    expect(await asked).toBe("required");
    expect(hints.taskSupportNow("slow")).toBe("required");
    expect(hints.taskSupportNow("echo")).toBeUndefined();
    // A tool not in the list: not there, for the short while a miss is believed; then unknown (the list is read again).
    expect(hints.taskSupportNow("added-since")).toBeUndefined();
    now += 2_000;
    expect(hints.taskSupportNow("added-since")).toBe("unknown");
    expect(hints.taskSupportNow("slow")).toBe("required");
    now += 60_000;
    expect(hints.taskSupportNow("slow")).toBe("unknown");
    hints.invalidate();
    expect(hints.taskSupportNow("echo")).toBe("unknown");
    expect(upstream.reads()).toBe(1);
  });

  it("gives policyOf the policy at once when known, and a promise of the same policy when not", async () => {
    const config = ConfigSchema.parse({ upstreams: [{ name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" } }] });
    const [upstream] = config.upstreams;
    let known: "required" | undefined | "unknown" = "unknown";
    const tasks = {
      support: async () => "required" as const,
      supportNow: () => known,
    } as unknown as UpstreamTasks;
    const waited = policyOf(config.tasks, upstream!, "slow", { tasks });
    expect(waited).toBeInstanceOf(Promise);
    known = "required";
    const atOnce = policyOf(config.tasks, upstream!, "slow", { tasks });
    expect(atOnce).not.toBeInstanceOf(Promise);
    expect(atOnce).toEqual(await waited);
    expect(atOnce).toMatchObject({ taskSupport: "required", requiredByUpstream: true, native: "always" });
    const failing = {
      support: () => Promise.reject(new Error("gone")),
      supportNow: () => {
        throw new Error("gone");
      },
    } as unknown as UpstreamTasks;
    expect(await policyOf(config.tasks, upstream!, "slow", { tasks: failing })).toEqual(policyOf(config.tasks, upstream!, "slow", undefined));
  });

  it("tells a tool the list shows without a declaration (undefined) from one it cannot tell yet, over the 2025-11-25 tasks", async () => {
    const upstream = listing([{ name: "slow", execution: { taskSupport: "optional" } }, { name: "echo" }]);
    const hints = new ToolHints(upstream.caller, () => 0);
    const tasks = new Tasks2025({
      channel: upstream.caller as never,
      capabilities: () => ({ tasks: { requests: { tools: { call: {} } } } }),
      session: () => undefined,
      toolSupport: (tool) => hints.taskSupport(tool),
      toolSupportNow: (tool) => hints.taskSupportNow(tool),
      onStatus: () => undefined,
      durable: false,
    });
    expect(tasks.supportNow("echo")).toBe("unknown");
    const asked = tasks.support("echo");
    await upstream.answer();
    expect(await asked).toBeUndefined();
    expect(tasks.supportNow("echo")).toBeUndefined();
    expect(tasks.supportNow("slow")).toBe("optional");
  });
});
