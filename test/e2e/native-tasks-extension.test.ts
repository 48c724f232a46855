import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { nativeLog, nextLogged } from "../helpers/native.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const UPSTREAM_MAX_TTL_MS = 600_000;
const ASKING = { ...WITH_TASKS, elicitation: { form: {} } };

function untilTask(url: string, taskId: string, accept: (task: any) => boolean, what: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      return accept(task) ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what },
  );
}

// The bridge writes the upstream task into the task record: both stores run every case.
describe.each(["memory", "redis"] as const)("an upstream that runs tools as its own 2025-11-25 tasks, on the 2026-07-28 wire (%s store)", (kind) => {
  let demo: RunningProcess & { mcpUrl: string };
  let gw: GatewayProcess;
  let native: string;
  let off: string;
  beforeAll(async () => {
    demo = await startDemoHttp(["--native-tasks"]);
    const store = kind === "redis" ? { redisUrl: inject("redisUrl"), keyPrefix: `native-b-${Date.now()}:` } : {};
    gw = await startGateway({
      store,
      // A threshold a loaded machine cannot stall a 10 ms call past (the inline test), well under the 3 s calls that must detach.
      tasks: { detachAfterMs: 1_000, pollIntervalMs: 200, requestStateSecret: "s".repeat(32) },
      upstreams: [
        { name: "native", path: "/mcp", http: { url: demo.mcpUrl } },
        { name: "off", path: "/off", http: { url: demo.mcpUrl }, nativeTasks: "off" },
      ],
    });
    native = gw.mcpUrl;
    off = `${gw.url}/off`;
  });
  afterAll(async () => {
    await gw?.stop();
    await demo?.stop();
  });

  it("shows the upstream task's question as inputRequests, takes the answer by tasks/update, and completes with the upstream's result", async () => {
    const call = await modern(native, "tools/call", { name: "review", arguments: { subject: "budget", ms: 100 } }, { capabilities: ASKING });
    expect(call.body.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = call.body.result.taskId as string;
    const asking = await untilTask(native, taskId, (t) => t.status === "input_required", "input_required");
    const [key, question] = Object.entries(asking.inputRequests as Record<string, any>)[0]!;
    expect(question).toEqual({ method: "elicitation/create", params: expect.objectContaining({ message: "Approve budget?" }) });
    expect(JSON.stringify(question)).not.toContain("related-task");
    const ack = await modern(
      native,
      "tasks/update",
      { taskId, inputResponses: { [key]: { action: "accept", content: { approve: false } } } },
      { capabilities: WITH_TASKS },
    );
    expect(ack.body.result).toEqual({ resultType: "complete" });
    const done = await untilTask(native, taskId, (t) => t.status === "completed", "completed");
    expect(done.result.content).toEqual([{ type: "text", text: "rejected budget" }]);
    // The upstream's related-task `_meta` names its own task, not this one: it is not passed on.
    expect(JSON.stringify(done.result)).not.toContain("related-task");
    expect(done.ttlMs).toBeLessThan(UPSTREAM_MAX_TTL_MS + 10_000);
  });

  it("forwards tasks/cancel to the upstream's task, which stops, and the task ends cancelled", async () => {
    const before = nativeLog(demo, "saw its cancel");
    const call = await modern(native, "tools/call", { name: "crunch", arguments: { ms: 60_000, steps: 600 } }, { capabilities: WITH_TASKS });
    const taskId = call.body.result.taskId as string;
    await untilTask(native, taskId, (t) => /Step \d+\/600/.test(t.statusMessage ?? ""), "the upstream's statusMessage");
    const ack = await modern(native, "tasks/cancel", { taskId }, { capabilities: WITH_TASKS });
    expect(ack.body.result).toEqual({ resultType: "complete" });
    await nextLogged(demo, "saw its cancel", before);
    expect((await untilTask(native, taskId, (t) => t.status !== "working", "an end")).status).toBe("cancelled");
  });

  it("answers a caller without the extension inline, with MRTR rounds for the upstream task's question", async () => {
    const first = await modern(
      native,
      "tools/call",
      { name: "review", arguments: { subject: "plan", ms: 50 } },
      { capabilities: { elicitation: { form: {} } } },
    );
    expect(first.body.result).toMatchObject({ resultType: "input_required" });
    const [key] = Object.keys(first.body.result.inputRequests);
    const retry = {
      name: "review",
      arguments: { subject: "plan", ms: 50 },
      inputResponses: { [key!]: { action: "accept", content: { approve: true } } },
      requestState: first.body.result.requestState,
    };
    const second = await modern(native, "tools/call", retry, { capabilities: { elicitation: { form: {} } } });
    expect(second.body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "approved plan" }] });
  });

  it("follows the upstream's task for an optional tool when the front call becomes a task (nativeTasks auto), and not with nativeTasks off", async () => {
    const started = nativeLog(demo, "started", "tally");
    const bridged = await modern(native, "tools/call", { name: "tally", arguments: { ms: 3_000, steps: 3 } }, { capabilities: WITH_TASKS });
    expect(bridged.body.result.resultType).toBe("task");
    const held = await modern(off, "tools/call", { name: "tally", arguments: { ms: 3_000, steps: 3 } }, { capabilities: WITH_TASKS });
    expect(held.body.result.resultType).toBe("task");
    const [a, b] = await Promise.all(
      [bridged, held].map((r, i) => untilTask(i === 0 ? native : off, r.body.result.taskId, (t) => t.status === "completed", "completed")),
    );
    expect(a!.result.content).toEqual([{ type: "text", text: "tallied in 3 steps" }]);
    expect(b!.result.content).toEqual([{ type: "text", text: "tallied in 3 steps" }]);
    // Bridged: the front task lives no longer than the upstream keeps its own; held by taskgate: the configured default.
    expect(a!.ttlMs).toBeLessThan(UPSTREAM_MAX_TTL_MS + 10_000);
    expect(b!.ttlMs).toBe(3_600_000);
    await nextLogged(demo, "started", started, "tally");
  });

  it("answers a short call of an optional tool inline even when it runs as the upstream's task", async () => {
    const quick = await modern(native, "tools/call", { name: "tally", arguments: { ms: 10, steps: 1 } }, { capabilities: WITH_TASKS });
    expect(quick.body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "tallied in 1 steps" }] });
  });
});
