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
});
