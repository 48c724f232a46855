import type { Server } from "./servers.js";

/** A taskgate's Prometheus text from /metrics, on the same listener as its MCP endpoint. */
export function metricsOf(s: Server): Promise<string> {
  return fetch(s.url.replace(/\/mcp$/, "/metrics"), { signal: AbortSignal.timeout(10_000) }).then((r) => r.text());
}

/** The sum of a metric's samples (every label set), NaN when it has none. */
export function gauge(text: string, name: string): number {
  const samples = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))].map((m) => Number(m[1]));
  return samples.length ? samples.reduce((a, b) => a + b, 0) : NaN;
}

/** A metric's samples by the value of one label, e.g. taskgate_store_errors_total by operation. */
export function byLabel(text: string, name: string, label: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm"))) {
    const value = new RegExp(`${label}="([^"]*)"`).exec(m[1]!)?.[1] ?? "";
    found.set(value, (found.get(value) ?? 0) + Number(m[2]));
  }
  return found;
}

/** What grew between two readings of `byLabel`, as "name n, …" ("none" when nothing did). */
export function grown(before: Map<string, number>, after: Map<string, number>): { total: number; text: string } {
  const parts: string[] = [];
  let total = 0;
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) {
      parts.push(`${k} ${d}`);
      total += d;
    }
  }
  return { total, text: parts.join(", ") || "none" };
}
