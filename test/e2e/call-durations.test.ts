import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * What an operator reads for a tools/call: its access line and mcp_server_operation_duration_seconds
 * give the time until its answer was complete (the whole call when it was held open, the time to
 * detach when it became a task); the task's end line and taskgate_task_duration_seconds give the
 * task's whole life.
 */
describe("a call's real duration in the logs and metrics", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      // A held call turns into SSE after 200 ms: its reply's headers leave long before its answer.
      http: { sseKeepAliveMs: 200 },
      tasks: { detachAfterMs: 700, pollIntervalMs: 200 },
      upstreams: [
        { name: "demo", path: "/mcp", stdio: demoStdio() },
        { name: "held", path: "/held", stdio: demoStdio() },
      ],
    });
  });
  afterAll(async () => gw?.stop());

  const lines = () =>
    gw
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
  const requestLine = (reqId: string) => lines().find((l) => l.msg === "request" && l.method === "tools/call" && l.reqId === reqId);

  it("logs and times a call held open for its whole length, and a detached one until it detached, then its task's whole life", async () => {
    const held = modern(
      `${gw.url}/held`,
      "tools/call",
      { name: "sleep", arguments: { seconds: 2, label: "held" } },
      { headers: { "x-request-id": "held-call" } },
    );
    const detached = modern(
      gw.mcpUrl,
      "tools/call",
      { name: "sleep", arguments: { seconds: 2.5 } },
      { capabilities: WITH_TASKS, headers: { "x-request-id": "detached-call" } },
    );
    const [h, d] = await Promise.all([held, detached]);
    expect(h.body.result.content[0].text).toBe("Slept 2 s (held)");
    expect(h.headers.get("content-type")).toContain("text/event-stream");
    expect(d.body.result.resultType).toBe("task");
    const taskId = d.body.result.taskId;

    const heldLine = await waitFor(() => requestLine("held-call"), { what: "the held call's request line" });
    // The whole call, not the moment its stream opened.
    expect(heldLine.ms).toBeGreaterThanOrEqual(2000);
    expect(heldLine.streamedAfterMs).toBeLessThan(heldLine.ms);
    const detachedLine = await waitFor(() => requestLine("detached-call"), { what: "the detached call's request line" });
    expect(detachedLine.ms).toBeGreaterThanOrEqual(700);
    expect(detachedLine.ms).toBeLessThan(2500);

    await waitFor(async () => ((await getTask(gw.mcpUrl, taskId)).body.result.status === "completed" ? true : undefined), {
      timeoutMs: 15_000,
      what: "the task to complete",
    });
    const ended = await waitFor(() => lines().find((l) => l.msg === "task ended" && l.taskId === taskId), { what: "the task's end line" });
    // From the call's arrival, the wait before it detached included.
    expect(ended.ms).toBeGreaterThanOrEqual(2500);

    const text = await scrape(gw.url);
    const ops = (suffix: string, upstream: string) =>
      sample(text, `mcp_server_operation_duration_seconds_${suffix}`, { upstream, mcp_method_name: "tools/call", gen_ai_tool_name: "sleep" });
    expect(ops("count", "held")).toBe(1);
    expect(ops("sum", "held")).toBeGreaterThanOrEqual(2);
    expect(ops("count", "demo")).toBe(1);
    expect(ops("sum", "demo")).toBeGreaterThanOrEqual(0.7);
    expect(ops("sum", "demo")).toBeLessThan(2.5);
    expect(sample(text, "taskgate_task_duration_seconds_count", { upstream: "demo", status: "completed" })).toBe(1);
    expect(sample(text, "taskgate_task_duration_seconds_sum", { upstream: "demo", status: "completed" })).toBeGreaterThanOrEqual(2.5);
  });
});
