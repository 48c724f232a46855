import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/observability/metrics.js";

const DASHBOARD = resolve(import.meta.dirname, "../../deploy/grafana/taskgate-dashboard.json");
const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
  panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; definition?: string; query?: unknown }> };
};

/** Every series taskgate exports, with the labels each may carry (histograms as their three series). */
function exported(): Map<string, readonly string[]> {
  const series = new Map<string, readonly string[]>();
  for (const metric of new Metrics().registry.getMetricsAsArray() as unknown as Array<{ name: string; type: string; labelNames?: string[] }>) {
    const labels = metric.labelNames ?? [];
    if (metric.type === "histogram") {
      series.set(`${metric.name}_bucket`, [...labels, "le"]);
      for (const suffix of ["_count", "_sum"]) series.set(metric.name + suffix, labels);
    } else series.set(metric.name, labels);
  }
  return series;
}

/** PromQL words that are not series: aggregations, modifiers, and Grafana's own variables. */
const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"]);

/** The series a PromQL expression selects, and the label names it uses on each. */
function seriesOf(expr: string): Array<{ name: string; labels: string[] }> {
  const found: Array<{ name: string; labels: string[] }> = [];
  // Drop strings, range/offset brackets and Grafana variables; keep matchers for their label names.
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\$\w+/g, "");
  for (const m of text.matchAll(/([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?/g)) {
    const [, word, matchers] = m;
    // A function or aggregation: followed by its arguments, or by its by/without clause.
    const call = /^\s*(?:\(|(?:by|without)\s*\()/.test(text.slice(m.index + word!.length));
    if (call || KEYWORDS.has(word!) || /^\d/.test(word!)) continue;
    // A word just after "by (" or "without (" lists labels, not series.
    const before = text.slice(0, m.index).trimEnd();
    if (/(?:by|without|on|ignoring)\s*\([^)]*$/.test(before)) continue;
    found.push({ name: word!, labels: [...(matchers ?? "").matchAll(/(\w+)\s*[=!~]+/g)].map((l) => l[1]!) });
  }
  return found;
}

describe("the Grafana dashboard under deploy/", () => {
  const series = exported();

  it("names only series taskgate exports, with labels they carry, in every panel's query", () => {
    expect(dashboard.panels.length).toBeGreaterThan(5);
    for (const panel of dashboard.panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets ?? []) {
        const used = seriesOf(expr);
        expect(used.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const { name, labels } of used) {
          expect(series.has(name), `${panel.title}: ${name} is not exported`).toBe(true);
          for (const label of labels) expect(series.get(name), `${panel.title}: ${name} has no label ${label}`).toContain(label);
        }
      }
    }
  });

  it("charts request rate, errors, latency, tasks in flight, tasks ended by status, lease losses and the upstream queue", () => {
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join("\n");
    expect(exprs).toContain("mcp_server_operation_duration_seconds_count");
    expect(exprs).toMatch(/outcome!="ok"/);
    expect(exprs).toMatch(/histogram_quantile\(.*mcp_server_operation_duration_seconds_bucket/);
    expect(exprs).toContain("taskgate_tasks_in_flight");
    expect(exprs).toMatch(/by \(status\) \(rate\(taskgate_tasks_ended_total/);
    expect(exprs).toContain("taskgate_lease_losses_total");
    expect(exprs).toContain("taskgate_upstream_queue_length");
    expect(exprs).toContain("taskgate_upstream_queue_wait_seconds_bucket");
  });

  it("fills its upstream variable from an exported series", () => {
    const variable = dashboard.templating.list.find((v) => v.name === "upstream");
    expect(variable, "the dashboard has an upstream variable").toBeDefined();
    expect(variable?.query).toMatchObject({ query: variable?.definition });
    // Grafana's label_values(series, label): the series must be exported and carry that label.
    const [, selector, label] = /^label_values\((.*), (\w+)\)$/.exec(variable?.definition ?? "") ?? [];
    expect(label, variable?.definition).toBe("upstream");
    const used = seriesOf(selector ?? "");
    expect(used.map((s) => s.name)).toHaveLength(1);
    expect(series.get(used[0]!.name), `${used[0]!.name}: not exported, or without an upstream label`).toContain("upstream");
  });

  it("catches a query that names a series taskgate does not export", () => {
    expect(seriesOf('sum by (status) (rate(taskgate_tasks_endd_total{upstream=~"$upstream"}[5m]))')).toEqual([
      { name: "taskgate_tasks_endd_total", labels: ["upstream"] },
    ]);
    expect(series.has("taskgate_tasks_endd_total")).toBe(false);
  });
});
