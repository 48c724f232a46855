import { againstFloor, FLOOR_LABEL, startStdioFloor } from "../lib/floors.js";
import { measure, measureTogether, type Measurement } from "../lib/load.js";
import { echoParams, LEGACY, legacyRequest, MODERN, modernRequest, openSession } from "../lib/mcp.js";
import type { Scenario, ScenarioOutput } from "../lib/result.js";
import { demoStdio, startGateway, startHono, startMcpProxy, type Server } from "../lib/servers.js";
import { addedMs, ratio, times } from "./compare.js";

/**
 * d. The same echo on a stdio upstream: through taskgate, through mcp-proxy (the usual way to put
 * a stdio server on HTTP), and a bare hono endpoint answering the same JSON-RPC call by itself,
 * which is the ceiling for anything built on that stack, and the floor of issue 16: a minimal hono
 * relay to the same stdio server. Both wires where the proxy serves both.
 */
export const stdioPassthrough: Scenario = {
  id: "d",
  title: "fast tool (echo) on a stdio upstream: taskgate vs its floor, mcp-proxy and bare hono",
  goals: {
    "stdio passthrough vs mcp-proxy (legacy)": "≥ 5× mcp-proxy",
    "stdio passthrough vs bare hono (legacy)": "≥ 0.4× bare hono",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const gate = await startGateway({ store: { redisUrl: ctx.redis.url, keyPrefix: "bench-d:" }, upstreams: [demoStdio()] });
      servers.push(gate);
      const proxy = await startMcpProxy();
      servers.push(proxy);
      const hono = await startHono();
      servers.push(hono);
      const floor = await startStdioFloor();
      servers.push(floor);
      const modern = modernRequest("tools/call", "echo", echoParams);
      const [floorRow, tgLegacy, tgModern] = await measureTogether([
        { label: `${FLOOR_LABEL} hono relay to the stdio echo server`, url: floor.url, request: legacyRequest("unused", "tools/call", echoParams), cpuPid: floor.proc.pid },
        { label: `taskgate, legacy (${LEGACY} session)`, url: gate.url, request: legacyRequest(await openSession(gate.url), "tools/call", echoParams), cpuPid: gate.proc.pid },
        { label: `taskgate, modern (${MODERN})`, url: gate.url, request: modern, cpuPid: gate.proc.pid },
      ], ctx.load, ctx.rounds);
      out.add(floorRow!);
      for (const row of [tgLegacy!, tgModern!]) out.add(againstFloor(row, floorRow!));
      const pxLegacy = out.add(await measure({ label: "mcp-proxy, legacy", url: proxy.url, request: legacyRequest(await openSession(proxy.url), "tools/call", echoParams), cpuPid: proxy.proc.pid }, ctx.load));
      const pxModern = await optional(out, () => measure({ label: "mcp-proxy, modern", url: proxy.url, request: modern, cpuPid: proxy.proc.pid }, ctx.load));
      const bare = out.add(await measure({ label: "bare hono POST /rpc", url: `${hono.url}/rpc`, request: legacyRequest("unused", "tools/call", echoParams), cpuPid: hono.proc.pid }, ctx.load));
      compare(out, "legacy", tgLegacy!, pxLegacy, bare);
      if (pxModern) compare(out, "modern", tgModern!, pxModern, bare);
      targets(out, tgLegacy!, pxLegacy, bare);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

function compare(out: ScenarioOutput, wire: string, taskgate: Measurement, proxy: Measurement, bare: Measurement): void {
  out.figure(`${wire}: taskgate vs mcp-proxy`, `${times(ratio(taskgate, proxy))} throughput, p50 ${addedMs(taskgate, proxy, "p50Ms")} ms, p99 ${addedMs(taskgate, proxy, "p99Ms")} ms`);
  out.figure(`${wire}: taskgate vs bare hono`, `${times(ratio(taskgate, bare))} throughput, p50 +${addedMs(taskgate, bare, "p50Ms")} ms, p99 +${addedMs(taskgate, bare, "p99Ms")} ms`);
}

function targets(out: ScenarioOutput, taskgate: Measurement, proxy: Measurement, bare: Measurement): void {
  const vsProxy = ratio(taskgate, proxy);
  const vsBare = ratio(taskgate, bare);
  out.target("stdio passthrough vs mcp-proxy (legacy)", times(vsProxy), vsProxy >= 5);
  out.target("stdio passthrough vs bare hono (legacy)", times(vsBare), vsBare >= 0.4);
}

/** A row that may not work (mcp-proxy's modern leg): reported as a note, and the run goes on. */
async function optional(out: ScenarioOutput, run: () => Promise<Measurement>): Promise<Measurement | undefined> {
  try {
    const m = await run();
    if (m.requests === 0) {
      out.note(`${m.label}: no successful reply (${m.failures} failed)`);
      return undefined;
    }
    return out.add(m);
  } catch (err) {
    out.note(`error: ${(err as Error).message}`);
    return undefined;
  }
}
