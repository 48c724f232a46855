import { measure } from "../lib/load.js";
import { echoParams, legacyRequest, modernRequest, openSession } from "../lib/mcp.js";
import type { Scenario } from "../lib/result.js";
import { startDemoHttp, startGateway, type Server } from "../lib/servers.js";
import { addedMs, ratio, times } from "./compare.js";

/**
 * a. What taskgate adds in front of an HTTP upstream: the demo server called directly, then
 * through taskgate on both wires. The demo server (SDK 1.x) speaks only the legacy wire, so the
 * modern row is held against the same direct legacy call: the work upstream is the same.
 */
export const httpPassthrough: Scenario = {
  id: "a",
  title: "fast tool (echo) on an HTTP upstream: direct vs through taskgate",
  goals: {
    "HTTP passthrough throughput (legacy)": "≥ 0.85× direct",
    "HTTP passthrough added p50 (legacy)": "≤ 1 ms",
    "HTTP passthrough throughput (modern)": "≥ 0.85× direct",
    "HTTP passthrough added p50 (modern)": "≤ 1 ms",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const demo = await startDemoHttp();
      servers.push(demo);
      const gate = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-a:" },
        upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.url } }],
      });
      servers.push(gate);
      const directSession = await openSession(demo.url);
      const direct = out.add(await measure({ label: "direct, legacy (2025-06-18 session)", url: demo.url, request: legacyRequest(directSession, "tools/call", echoParams) }, ctx.load));
      const gateSession = await openSession(gate.url);
      const legacy = out.add(await measure({ label: "through taskgate, legacy", url: gate.url, request: legacyRequest(gateSession, "tools/call", echoParams) }, ctx.load));
      const modern = out.add(await measure({ label: "through taskgate, modern (2026-07-28)", url: gate.url, request: modernRequest("tools/call", "echo", echoParams) }, ctx.load));
      for (const [wire, row] of [["legacy", legacy], ["modern", modern]] as const) {
        const r = ratio(row, direct);
        const p50 = addedMs(row, direct, "p50Ms");
        out.figure(`${wire}: throughput vs direct`, times(r));
        out.figure(`${wire}: added p50 / p99`, `${p50} ms / ${addedMs(row, direct, "p99Ms")} ms`);
        out.target(`HTTP passthrough throughput (${wire})`, times(r), r >= 0.85);
        out.target(`HTTP passthrough added p50 (${wire})`, `${p50} ms`, p50 <= 1);
      }
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};
