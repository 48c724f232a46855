import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { startHttpFloor, startStdioFloor } from "./lib/floors.js";
import { measureTogether, type LoadSpec } from "./lib/load.js";
import { describeMachine } from "./lib/machine.js";
import { echoParams, legacyRequest, modernRequest, openSession, sessionlessRequest } from "./lib/mcp.js";
import { pinCores, stopAll } from "./lib/procs.js";
import { startRedis } from "./lib/redis.js";
import { demoStdio, PLAIN_LAUNCH, removeConfigFiles, startDemoHttp, startGateway, startStatelessSdk, type Server } from "./lib/servers.js";
import { signedMs } from "./scenarios/compare.js";
import { STATELESS_ECHO } from "./scenarios/http-passthrough.js";
import { median, PRELOAD, STRETCHES, stretchesOf, Timeline, type Stretches } from "./lib/timeline.js";
import { DEMO, RESULTS } from "./paths.js";
import { readSettings } from "./settings.js";

/**
 * `node dist-bench/bench/one-connection.js` (after a bench build): a relay's latency at one
 * connection, with what it can be read to. The rows take turns as in scenarios a and d: the floor,
 * a second process of the same floor (its distance from the first is the measurement's own
 * spread), taskgate on both wires. BENCH_UPSTREAM: the demo server over HTTP (`demo`, the
 * default), the SDK's stateless server (`stateless`), or the demo over stdio (`stdio`).
 * BENCH_RUNS runs (default 5).
 * BENCH_TIMELINE=1 stamps the relays and the upstream (lib/timeline.ts) and splits each row's
 * calls into the relay's stretches and the upstream's.
 */
interface Row {
  spec: LoadSpec;
  server: Server;
  calls: Stretches[];
}

const UPSTREAMS = ["demo", "stateless", "stdio"];
const DESCRIBED: Record<string, string> = { demo: "the demo server over HTTP", stateless: "a stateless SDK server", stdio: "the demo server over stdio" };
const FLOORS: Record<string, string> = { demo: "hono + undici relay", stateless: "hono + undici relay", stdio: "hono relay to the stdio echo server" };

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  if (!Number.isInteger(runs) || runs < 1 || runs > 50) throw new Error(`BENCH_RUNS must be a whole number in [1, 50], got "${process.env.BENCH_RUNS}"`);
  const over = process.env.BENCH_UPSTREAM || "demo";
  if (!UPSTREAMS.includes(over)) throw new Error(`BENCH_UPSTREAM must be one of ${UPSTREAMS.join(", ")}, got "${over}"`);
  const timeline = process.env.BENCH_TIMELINE === "1" ? new Timeline() : undefined;
  const launch = timeline?.launch() ?? PLAIN_LAUNCH;
  const pin = pinCores(cpus().length);
  const started = new Date().toISOString();
  const load = { ...settings.load, connections: 1 };
  const pinning = pin.pinning ? "servers pinned to one core, load to another" : `not pinned: ${pin.reason}`;
  const machine = describeMachine("-", pinning);
  const lines = [
    `One connection through a relay to ${DESCRIBED[over]}, ${started}: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}; ${pinning}; load average at the start ${machine.loadAverage.join(", ")}.`,
    `Command: \`${settings.command.replace("npm run bench", "node dist-bench/bench/one-connection.js")}\`${runs === 5 ? "" : ` BENCH_RUNS=${runs}`}${over === "demo" ? "" : ` BENCH_UPSTREAM=${over}`}${timeline ? " BENCH_TIMELINE=1" : ""}. Each run: ${load.warmupS} s warm-up, ${load.durationS} s a row in ${settings.roundsOne} turns; p50 above the floor's, in ms.`,
    "",
  ];
  const redis = await startRedis();
  try {
    const store = { redisUrl: redis.url, keyPrefix: "bench-one:" };
    let upstreamPids: (relay: Server) => number[];
    let gate: Server;
    let floors: Server[];
    if (over === "stdio") {
      // The demo is the relays' child, stamped as they are.
      const childArgs = timeline ? ["--require", PRELOAD] : [];
      const stdio = { command: process.execPath, args: [...childArgs, DEMO], ...(timeline ? { env: { TIMELINE_DIR: timeline.dir } } : {}) };
      gate = await startGateway({ store, upstreams: [{ ...demoStdio(), stdio }] }, launch);
      floors = [await startStdioFloor(launch, childArgs), await startStdioFloor(launch, childArgs)];
      upstreamPids = (relay) => childrenOf(relay.proc.pid);
    } else {
      const upstream = over === "stateless" ? await startStatelessSdk(launch) : await startDemoHttp(launch);
      gate = await startGateway({ store, upstreams: [{ name: "up", path: "/mcp", http: { url: upstream.url } }] }, launch);
      floors = [await startHttpFloor(upstream.url, launch), await startHttpFloor(upstream.url, launch)];
      upstreamPids = () => [upstream.proc.pid];
    }
    // Each floor is called as scenarios a and d call it: with the caller's own session where the upstream keeps one.
    const params = over === "stateless" ? STATELESS_ECHO : echoParams;
    const direct = async (url: string) =>
      over === "demo"
        ? legacyRequest(await openSession(url), "tools/call", params)
        : over === "stateless"
          ? sessionlessRequest("tools/call", params)
          : legacyRequest("unused", "tools/call", params);
    const rows: Row[] = [
      row(`floor: ${FLOORS[over]}`, floors[0]!, await direct(floors[0]!.url)),
      row("a second floor process", floors[1]!, await direct(floors[1]!.url)),
      row("through taskgate, legacy", gate, legacyRequest(await openSession(gate.url), "tools/call", params)),
      row("through taskgate, modern", gate, modernRequest("tools/call", "echo", params)),
    ];
    if (timeline) for (const r of rows) r.spec.around = stamping(timeline, r, upstreamPids, over === "stdio" ? "stdio" : "http");
    lines.push(
      `| run | floor p50 | ${rows
        .slice(1)
        .map((r) => r.spec.label)
        .join(" | ")} |`,
      `| --- | ---: | ${rows
        .slice(1)
        .map(() => "---:")
        .join(" | ")} |`,
    );
    const added: number[][] = rows.map(() => []);
    for (let run = 1; run <= runs; run++) {
      const measured = await measureTogether(
        rows.map((r) => r.spec),
        load,
        settings.roundsOne,
      );
      const floorP50 = measured[0]!.p50Ms;
      measured.forEach((m, i) => added[i]!.push(m.p50Ms - floorP50));
      lines.push(
        `| ${run} | ${floorP50.toFixed(3)} | ${measured
          .slice(1)
          .map((m) => signedMs(m.p50Ms - floorP50))
          .join(" | ")} |`,
      );
      process.stderr.write(`one-connection: run ${run} of ${runs}\n`);
    }
    lines.push(
      `| median | | ${added
        .slice(1)
        .map((a) => signedMs(median(a)))
        .join(" | ")} |`,
      "",
    );
    if (timeline) lines.push(...stretchTable(rows));
  } finally {
    await stopAll();
    removeConfigFiles();
    await redis.close();
    timeline?.remove();
  }
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${started.replace(/[:.]/g, "-")}-one-connection.md`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stderr.write(`one-connection: report in ${file}\n`);
}

function row(label: string, server: Server, request: LoadSpec["request"]): Row {
  return { spec: { label, url: server.url, request, cpuPid: server.proc.pid }, server, calls: [] };
}

/** Each slice of the row recorded in the relay and its upstream processes, its calls matched. */
function stamping(timeline: Timeline, r: Row, upstreamPids: (relay: Server) => number[], over: "http" | "stdio"): NonNullable<LoadSpec["around"]> {
  return async () => {
    const pids = [r.server.proc.pid, ...upstreamPids(r.server)];
    timeline.start(pids);
    return async () => {
      const [relay, ...upstreams] = await timeline.stop(pids);
      r.calls.push(
        ...stretchesOf(
          relay!,
          upstreams.flat().sort((a, b) => a[1] - b[1]),
          over,
        ),
      );
    };
  };
}

/** A process's children (the stdio upstreams a relay started). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

function stretchTable(rows: Row[]): string[] {
  const out = [
    "Medians of every call's stretches, µs (lib/timeline.ts): the relay's own before and after its upstream, the way there and back, the upstream's own.",
    "",
    `| row | calls | ${STRETCHES.join(" | ")} |`,
    `| --- | ---: | ${STRETCHES.map(() => "---:").join(" | ")} |`,
  ];
  for (const r of rows) out.push(`| ${r.spec.label} | ${r.calls.length} | ${STRETCHES.map((s) => median(r.calls.map((c) => c[s]))).join(" | ")} |`);
  return [...out, ""];
}

main().catch((err: unknown) => {
  process.stderr.write(`one-connection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  void stopAll().finally(() => process.exit(1));
});
