import { againstFloor, FLOOR_LABEL, startStdioFloor } from "../lib/floors.js";
import { measure, measureTogether, round, type LoadSettings, type LoadSpec, type Measurement } from "../lib/load.js";
import { childPids, rssMiB } from "../lib/probe.js";
import { echoParams, LEGACY, legacyRequest, MODERN, modernRequest, openSession, type WireRequest } from "../lib/mcp.js";
import type { Scenario, ScenarioOutput } from "../lib/result.js";
import { demoStdio, startGateway, startHono, startMcpProxy, type Server } from "../lib/servers.js";
import { addedMs, ratio, signedMs, times } from "./compare.js";

/**
 * d. The same echo on a stdio upstream: through taskgate, through mcp-proxy (the usual way to put
 * a stdio server on HTTP), and a bare hono endpoint answering the same JSON-RPC call by itself,
 * which is the ceiling for anything built on that stack, and the floor: a minimal hono
 * relay to the same stdio server. Both wires where the proxy serves both. taskgate runs twice:
 * with its default isolation (a pool of processes, one call each) and with `isolation: shared`
 * (one process for every call), measured in the same rounds, so the pool's cost is a ratio of
 * this run; the pool is warmed up until it stops growing first.
 */
export const stdioPassthrough: Scenario = {
  id: "d",
  title: "fast tool (echo) on a stdio upstream: taskgate vs its floor, mcp-proxy and bare hono",
  goals: {
    "stdio passthrough vs mcp-proxy (legacy)": "≥ 5× mcp-proxy",
    "stdio passthrough vs bare hono (legacy)": "≥ 0.4× bare hono",
    "stdio pool (default) vs shared (legacy)": "≥ 0.9× shared",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const gate = await startGateway({ store: { redisUrl: ctx.redis.url, keyPrefix: "bench-d:" }, upstreams: [demoStdio()] });
      servers.push(gate);
      const shared = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-d-shared:" },
        upstreams: [{ ...demoStdio(), isolation: "shared" }],
      });
      servers.push(shared);
      const proxy = await startMcpProxy();
      servers.push(proxy);
      const hono = await startHono();
      servers.push(hono);
      const floor = await startStdioFloor();
      servers.push(floor);
      const floor2 = await startStdioFloor();
      servers.push(floor2);
      // Through the same rows as the first floor: how warm a process is moves its CPU by half.
      const floor2Spec: LoadSpec = {
        label: `${FLOOR_LABEL} a second process of the hono relay to the stdio echo server`,
        url: floor2.url,
        request: legacyRequest("unused", "tools/call", echoParams),
        cpuPid: floor2.proc.pid,
      };
      const modern = modernRequest("tools/call", "echo", echoParams);
      const legacyPool = legacyRequest(await openSession(gate.url), "tools/call", echoParams);
      const grown = await settlePool(gate, legacyPool, ctx.load);
      const [floorRow, tgLegacy, tgModern, shLegacy, shModern, floor2Row] = await measureTogether(
        [
          {
            label: `${FLOOR_LABEL} hono relay to the stdio echo server`,
            url: floor.url,
            request: legacyRequest("unused", "tools/call", echoParams),
            cpuPid: floor.proc.pid,
          },
          { label: `taskgate, legacy (${LEGACY} session)`, url: gate.url, request: legacyPool, cpuPid: gate.proc.pid },
          { label: `taskgate, modern (${MODERN})`, url: gate.url, request: modern, cpuPid: gate.proc.pid },
          {
            label: `taskgate isolation: shared, legacy (${LEGACY} session)`,
            url: shared.url,
            request: legacyRequest(await openSession(shared.url), "tools/call", echoParams),
            cpuPid: shared.proc.pid,
          },
          { label: `taskgate isolation: shared, modern (${MODERN})`, url: shared.url, request: modern, cpuPid: shared.proc.pid },
          floor2Spec,
        ],
        ctx.load,
        ctx.rounds,
      );
      const poolRss = { ...upstreamRss(gate), before: grown };
      const sharedRss = upstreamRss(shared);
      out.add(floorRow!);
      for (const row of [tgLegacy!, tgModern!, shLegacy!, shModern!, floor2Row!]) out.add(againstFloor(row, floorRow!));
      // With one connection, where p50 is what a single call costs rather than queueing.
      const single = await measureTogether(
        [
          {
            label: `${FLOOR_LABEL} hono relay to the stdio echo server, 1 conn.`,
            url: floor.url,
            request: legacyRequest("unused", "tools/call", echoParams),
            cpuPid: floor.proc.pid,
          },
          { label: `taskgate, legacy (${LEGACY} session), 1 conn.`, url: gate.url, request: legacyPool, cpuPid: gate.proc.pid },
          { label: `taskgate, modern (${MODERN}), 1 conn.`, url: gate.url, request: modern, cpuPid: gate.proc.pid },
          { ...floor2Spec, label: `${floor2Spec.label}, 1 conn.` },
        ],
        { ...ctx.load, connections: 1 },
        ctx.roundsOne,
      );
      out.add(single[0]!);
      for (const row of single.slice(1)) out.add(againstFloor(row, single[0]!));
      const above = (row: Measurement) => `${signedMs(row.p50Ms - single[0]!.p50Ms)} ms`;
      out.figure("legacy: added p50 with one connection vs the floor", above(single[1]!));
      out.figure("modern: added p50 with one connection vs the floor", above(single[2]!));
      out.figure("a second floor process: p50 with one connection vs the first (the rows' own spread)", above(single[3]!));
      const pxLegacy = out.add(
        await measure(
          {
            label: "mcp-proxy, legacy",
            url: proxy.url,
            request: legacyRequest(await openSession(proxy.url), "tools/call", echoParams),
            cpuPid: proxy.proc.pid,
          },
          ctx.load,
        ),
      );
      const pxModern = await optional(out, () => measure({ label: "mcp-proxy, modern", url: proxy.url, request: modern, cpuPid: proxy.proc.pid }, ctx.load));
      const bare = out.add(
        await measure(
          { label: "bare hono POST /rpc", url: `${hono.url}/rpc`, request: legacyRequest("unused", "tools/call", echoParams), cpuPid: hono.proc.pid },
          ctx.load,
        ),
      );
      compare(out, "legacy", tgLegacy!, pxLegacy, bare);
      if (pxModern) compare(out, "modern", tgModern!, pxModern, bare);
      isolation(out, [tgLegacy!, tgModern!], [shLegacy!, shModern!], poolRss, sharedRss);
      targets(out, tgLegacy!, pxLegacy, bare);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

function compare(out: ScenarioOutput, wire: string, taskgate: Measurement, proxy: Measurement, bare: Measurement): void {
  out.figure(
    `${wire}: taskgate vs mcp-proxy`,
    `${times(ratio(taskgate, proxy))} throughput, p50 ${addedMs(taskgate, proxy, "p50Ms")} ms, p99 ${addedMs(taskgate, proxy, "p99Ms")} ms`,
  );
  out.figure(
    `${wire}: taskgate vs bare hono`,
    `${times(ratio(taskgate, bare))} throughput, p50 +${addedMs(taskgate, bare, "p50Ms")} ms, p99 +${addedMs(taskgate, bare, "p99Ms")} ms`,
  );
}

/** The upstream processes a taskgate holds (home and pool), after the load: how many, and their RSS together. */
function upstreamRss(gate: Server): { count: number; mib: number } {
  const rss = childPids(gate.proc.pid).map(rssMiB);
  return {
    count: rss.length,
    mib: round(
      rss.reduce((a, b) => a + b, 0),
      1,
    ),
  };
}

/**
 * The pool grows under a steady load (GrowthRule, src/upstream/mux/pool-growth.ts): warm it up
 * until a whole warm-up adds no process, so no spawn falls in the measured window. The process
 * count it settled on; the report gives it beside the count after the run.
 */
async function settlePool(gate: Server, request: WireRequest, load: LoadSettings): Promise<number> {
  let [count, still] = [childPids(gate.proc.pid).length, 0];
  // Settled: two warm-ups in a row added no process (a spawn under load takes a while).
  for (let i = 0; i < MAX_SETTLE_ROUNDS && still < 2; i++) {
    await measure({ label: "pool warm-up", url: gate.url, request }, { ...load, warmupS: 0, durationS: Math.max(2, load.warmupS) });
    const now = childPids(gate.proc.pid).length;
    still = now === count ? still + 1 : 0;
    count = now;
  }
  return count;
}

const MAX_SETTLE_ROUNDS = 10;

function isolation(
  out: ScenarioOutput,
  pool: Measurement[],
  shared: Measurement[],
  poolRss: { count: number; mib: number; before: number },
  sharedRss: { count: number; mib: number },
): void {
  const [legacy, modern] = [0, 1].map((i) => ratio(pool[i]!, shared[i]!));
  out.figure(
    "legacy: pool (default) vs isolation: shared",
    `${times(legacy!)} throughput, p50 ${addedMs(pool[0]!, shared[0]!, "p50Ms")} ms, p99 ${addedMs(pool[0]!, shared[0]!, "p99Ms")} ms`,
  );
  out.figure(
    "modern: pool (default) vs isolation: shared",
    `${times(modern!)} throughput, p50 ${addedMs(pool[1]!, shared[1]!, "p50Ms")} ms, p99 ${addedMs(pool[1]!, shared[1]!, "p99Ms")} ms`,
  );
  out.figure(
    "upstream processes and their RSS, pool (default)",
    `${poolRss.count} processes (home + pool; ${poolRss.before} when the measured window began), ${poolRss.mib} MiB together`,
  );
  out.figure("upstream processes and their RSS, isolation: shared", `${sharedRss.count} process, ${sharedRss.mib} MiB`);
  out.target("stdio pool (default) vs shared (legacy)", times(legacy!), legacy! >= 0.9);
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
