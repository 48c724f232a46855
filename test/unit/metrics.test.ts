import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/observability/metrics.js";
import { sample } from "../helpers/prometheus.js";

describe("metrics", () => {
  it("bounds the tool label: past 200 distinct names, new ones count as other", async () => {
    const metrics = new Metrics({ processMetrics: false });
    for (let i = 0; i < 250; i++) metrics.taskCreated("demo", `tool-${i}`);
    metrics.taskCreated("demo", "tool-7");
    const text = await metrics.render();
    expect(sample(text, "taskgate_tasks_created_total", { tool: "tool-7" })).toBe(2);
    expect(sample(text, "taskgate_tasks_created_total", { tool: "tool-199" })).toBe(1);
    expect(sample(text, "taskgate_tasks_created_total", { tool: "tool-200" })).toBeUndefined();
    expect(sample(text, "taskgate_tasks_created_total", { tool: "other" })).toBe(50);
  });

  it("keeps each gateway's counts in its own registry", async () => {
    const [a, b] = [new Metrics({ processMetrics: false }), new Metrics({ processMetrics: false })];
    a.leaseLost();
    b.setInFlight(() => 7);
    expect(sample(await a.render(), "taskgate_lease_losses_total")).toBe(1);
    expect(sample(await b.render(), "taskgate_lease_losses_total")).toBe(0);
    expect(sample(await b.render(), "taskgate_tasks_in_flight")).toBe(7);
  });

  it("renders front requests as a Prometheus histogram: cumulative buckets, _sum and _count per label set", async () => {
    const metrics = new Metrics({ processMetrics: false });
    for (const seconds of [0.002, 0.02, 0.02, 3]) metrics.operation("demo", "tools/call", "echo", "modern", "ok", "", seconds);
    metrics.operation("demo", "tools/call", "echo", "modern", "invalid_params", "-32602", 0.001);
    const text = await metrics.render();
    const ok = { mcp_method_name: "tools/call", gen_ai_tool_name: "echo", wire: "modern", outcome: "ok", error_type: "" };
    expect(text).toContain("# TYPE mcp_server_operation_duration_seconds histogram");
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { ...ok, le: "0.001" })).toBe(0);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { ...ok, le: "0.0025" })).toBe(1);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { ...ok, le: "0.025" })).toBe(3);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { ...ok, le: "5" })).toBe(4);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { ...ok, le: "+Inf" })).toBe(4);
    expect(sample(text, "mcp_server_operation_duration_seconds_sum", ok)).toBeCloseTo(3.042);
    expect(sample(text, "mcp_server_operation_duration_seconds_count", ok)).toBe(4);
    expect(sample(text, "mcp_server_operation_duration_seconds_count", { outcome: "invalid_params", error_type: "-32602" })).toBe(1);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { outcome: "invalid_params", le: "0.001" })).toBe(1);
  });

  it("bounds the method and tool labels of front requests too", async () => {
    const metrics = new Metrics({ processMetrics: false });
    for (let i = 0; i < 210; i++) metrics.operation("demo", `m-${i}`, "", "legacy", "method_not_found", "-32601", 0.001);
    for (let i = 0; i < 3; i++) metrics.operation("demo", "tools/call", `tool-${250 + i}`, "modern", "ok", "", 0.001);
    const text = await metrics.render();
    expect(sample(text, "mcp_server_operation_duration_seconds_count", { mcp_method_name: "m-199" })).toBe(1);
    expect(sample(text, "mcp_server_operation_duration_seconds_count", { mcp_method_name: "other" })).toBe(10 + 3);
  });
});
