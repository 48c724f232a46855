import { againstFloor, FLOOR_LABEL, startHttpFloor } from "../lib/floors.js";
import { measureTogether, type LoadSpec, type Measurement } from "../lib/load.js";
import { echoParams, LEGACY, legacyRequest, MODERN, modernRequest, openSession, sessionlessRequest } from "../lib/mcp.js";
import type { BenchContext, Scenario, ScenarioOutput } from "../lib/result.js";
import { startDemoHttp, startGateway, startStatelessSdk, type Server } from "../lib/servers.js";
import { addedMs, ratio, signedMs, times } from "./compare.js";

/**
 * a. What taskgate adds in front of an HTTP upstream: the demo server called directly, then
 * through taskgate on both wires. The demo server (SDK 1.x) speaks only the legacy wire, so the
 * modern row is held against the same direct legacy call: the work upstream is the same.
 * Latency is measured twice: under the run's load, where p50 is mostly queueing, and with one
 * connection, where it is what a single call costs. The floor (a minimal hono + undici
 * relay to the same demo server) is measured beside them. Then the same against a stateless
 * upstream (the SDK with a fresh server and transport per POST, as serverless deployments run
 * it), with its own floor.
 */
export const httpPassthrough: Scenario = {
  id: "a",
  title: "fast tool (echo) on an HTTP upstream: direct vs through taskgate",
  goals: {
    "HTTP passthrough throughput (legacy)": "≥ 0.85× direct",
    "HTTP passthrough added p50 (legacy)": "≤ 1 ms",
    "HTTP passthrough throughput (modern)": "≥ 0.85× direct",
    "HTTP passthrough added p50 (modern)": "≤ 1 ms",
    "HTTP session pool (default) vs shared (legacy)": "≥ 0.9×",
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
      // The same upstream with one session for every call: what the session pool (the default) costs beside it.
      const gateShared = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-a-shared:" },
        upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.url }, isolation: "shared" }],
      });
      servers.push(gateShared);
      const floor = await startHttpFloor(demo.url);
      servers.push(floor);
      const floor2 = await startHttpFloor(demo.url);
      servers.push(floor2);
      const direct: LoadSpec = {
        label: `direct, legacy (${LEGACY} session)`,
        url: demo.url,
        request: legacyRequest(await openSession(demo.url), "tools/call", echoParams),
        cpuPid: demo.proc.pid,
      };
      const floorSpec: LoadSpec = {
        label: `${FLOOR_LABEL} hono + undici relay, legacy`,
        url: floor.url,
        request: legacyRequest(await openSession(floor.url), "tools/call", echoParams),
        cpuPid: floor.proc.pid,
      };
      const legacy: LoadSpec = {
        label: "through taskgate, legacy",
        url: gate.url,
        request: legacyRequest(await openSession(gate.url), "tools/call", echoParams),
        cpuPid: gate.proc.pid,
      };
      const modern: LoadSpec = {
        label: `through taskgate, modern (${MODERN})`,
        url: gate.url,
        request: modernRequest("tools/call", "echo", echoParams),
        cpuPid: gate.proc.pid,
      };
      const sharedLegacy: LoadSpec = {
        label: "through taskgate, legacy, isolation: shared",
        url: gateShared.url,
        request: legacyRequest(await openSession(gateShared.url), "tools/call", echoParams),
        cpuPid: gateShared.proc.pid,
      };
      const sharedModern: LoadSpec = {
        label: `through taskgate, modern (${MODERN}), isolation: shared`,
        url: gateShared.url,
        request: modernRequest("tools/call", "echo", echoParams),
        cpuPid: gateShared.proc.pid,
      };
      // The second floor goes through the same rows as the first: how warm a process is moves its CPU by half.
      const floor2Spec = await secondFloor(floor2, floorSpec);
      const loaded = await rows(ctx, out, [direct, floorSpec, legacy, modern, sharedLegacy, sharedModern, floor2Spec], ctx.load.connections);
      const single = await rows(ctx, out, [direct, floorSpec, legacy, modern, floor2Spec], 1);
      againstFloorAt1(out, "", single);
      sessionPool(out, [loaded[2]!, loaded[3]!], [loaded[4]!, loaded[5]!]);
      await stateless(ctx, out, servers);
      for (const [wire, i] of [
        ["legacy", 2],
        ["modern", 3],
      ] as const)
        judge(out, wire, [loaded[0]!, loaded[i]!], [single[0]!, single[i]!]);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

/** The SDK's echo on the stateless fixture (its argument is `message`). */
export const STATELESS_ECHO = { name: "echo", arguments: { message: "hello from the bench" } };

/** Direct, floor and taskgate on both wires against a stateless SDK upstream, loaded and with one connection. */
async function stateless(ctx: BenchContext, out: ScenarioOutput, servers: Server[]): Promise<void> {
  const upstream = await startStatelessSdk();
  servers.push(upstream);
  const gate = await startGateway({
    store: { redisUrl: ctx.redis.url, keyPrefix: "bench-a-stateless:" },
    upstreams: [{ name: "stateless", path: "/mcp", http: { url: upstream.url } }],
  });
  servers.push(gate);
  const floor = await startHttpFloor(upstream.url);
  servers.push(floor);
  const floor2 = await startHttpFloor(upstream.url);
  servers.push(floor2);
  const specs: LoadSpec[] = [
    {
      label: "stateless upstream: direct, legacy (no session)",
      url: upstream.url,
      request: sessionlessRequest("tools/call", STATELESS_ECHO),
      cpuPid: upstream.proc.pid,
    },
    {
      label: `stateless upstream: ${FLOOR_LABEL} hono + undici relay`,
      url: floor.url,
      request: sessionlessRequest("tools/call", STATELESS_ECHO),
      cpuPid: floor.proc.pid,
    },
    {
      label: "stateless upstream: through taskgate, legacy",
      url: gate.url,
      request: legacyRequest(await openSession(gate.url), "tools/call", STATELESS_ECHO),
      cpuPid: gate.proc.pid,
    },
    {
      label: `stateless upstream: through taskgate, modern (${MODERN})`,
      url: gate.url,
      request: modernRequest("tools/call", "echo", STATELESS_ECHO),
      cpuPid: gate.proc.pid,
    },
  ];
  specs.push(await secondFloor(floor2, specs[1]!));
  await rows(ctx, out, specs, ctx.load.connections);
  againstFloorAt1(out, "stateless upstream, ", await rows(ctx, out, specs, 1));
}

/** Another process of the same floor, called as the first is: its p50 above the first's is the one-connection rows' own spread. */
async function secondFloor(floor: Server, first: LoadSpec): Promise<LoadSpec> {
  const session = first.request?.headers["mcp-session-id"];
  return {
    label: first.label.replace(FLOOR_LABEL, `${FLOOR_LABEL} a second process of the`),
    url: floor.url,
    request: session ? legacyRequest(await openSession(floor.url), "tools/call", echoParams) : first.request,
    cpuPid: floor.proc.pid,
  };
}

/** The one-connection rows [direct, floor, legacy, modern, second floor]: each p50 above the floor's. */
function againstFloorAt1(out: ScenarioOutput, upstream: string, [, floor, legacy, modern, floor2]: Measurement[]): void {
  const above = (row: Measurement) => `${signedMs(row.p50Ms - floor!.p50Ms)} ms`;
  out.figure(
    `${upstream}added p50 with one connection vs the floor: legacy / modern (a second floor process)`,
    `${above(legacy!)} / ${above(modern!)} (${above(floor2!)})`,
  );
}

/**
 * [direct, floor, legacy, modern, (shared legacy, shared modern,) a second floor] in turns
 * (BENCH_ROUNDS, BENCH_ROUNDS_ONE with one connection), the rows after the floor held against it.
 */
async function rows(ctx: BenchContext, out: ScenarioOutput, specs: LoadSpec[], connections: number): Promise<Measurement[]> {
  const labelled = specs.map((spec) => ({ ...spec, label: `${spec.label}, ${connections} conn.` }));
  const measured = await measureTogether(labelled, { ...ctx.load, connections }, connections === 1 ? ctx.roundsOne : ctx.rounds);
  for (let i = 2; i < measured.length; i++) againstFloor(measured[i]!, measured[1]!);
  for (const m of measured) out.add(m);
  return measured;
}

/** Throughput from the loaded rows; the added p50 target from the single-connection rows. */
function judge(out: ScenarioOutput, wire: string, [direct, through]: Measurement[], [direct1, through1]: Measurement[]): void {
  const r = ratio(through!, direct!);
  const p50 = addedMs(through1!, direct1!, "p50Ms");
  out.figure(`${wire}: throughput vs direct`, times(r));
  out.figure(`${wire}: added p50 / p99 under load`, `${addedMs(through!, direct!, "p50Ms")} ms / ${addedMs(through!, direct!, "p99Ms")} ms`);
  out.figure(`${wire}: added p50 / p99 with one connection`, `${p50} ms / ${addedMs(through1!, direct1!, "p99Ms")} ms`);
  out.target(`HTTP passthrough throughput (${wire})`, times(r), r >= 0.85);
  out.target(`HTTP passthrough added p50 (${wire})`, `${p50} ms (one connection)`, p50 <= 1);
}

/** The default (a session per call, quick tools on the quiet lane) against one shared session, for quick calls. */
function sessionPool(out: ScenarioOutput, [legacy, modern]: Measurement[], [sharedLegacy, sharedModern]: Measurement[]): void {
  const [l, m] = [ratio(legacy!, sharedLegacy!), ratio(modern!, sharedModern!)];
  out.figure("legacy: session pool (default) vs isolation: shared", `${times(l)} throughput, p50 ${addedMs(legacy!, sharedLegacy!, "p50Ms")} ms`);
  out.figure("modern: session pool (default) vs isolation: shared", `${times(m)} throughput, p50 ${addedMs(modern!, sharedModern!, "p50Ms")} ms`);
  out.target("HTTP session pool (default) vs shared (legacy)", times(l), l >= 0.9);
}
