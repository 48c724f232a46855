import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { measureTogether, type LoadSpec, type Measurement } from "./lib/load.js";
import { describeMachine } from "./lib/machine.js";
import { echoParams, legacyRequest, modernRequest, openSession, WITH_TASKS } from "./lib/mcp.js";
import { pinCores, stopAll } from "./lib/procs.js";
import { startRedis, type BenchRedis } from "./lib/redis.js";
import { demoStdio, PLAIN_LAUNCH, removeConfigFiles, startDemoHttp, startGateway, type Server } from "./lib/servers.js";
import { createTask, untilEnded } from "./lib/tasks.js";
import { CLI, RESULTS } from "./paths.js";
import { readSettings } from "./settings.js";

/**
 * `BENCH_BASE=<another checkout, built> BENCH_BASE_NAME="main at <commit>" node dist-bench/bench/builds.js`: this build's taskgate
 * beside another build's (the one before a change), on the three hot paths, rows in
 * turns (BENCH_ROUNDS) so that load drifting on a shared machine falls on both alike. Reports
 * each path's CPU-µs per request of taskgate's own process, before and after, as a ratio of one run.
 * BENCH_ONLY picks paths: d (stdio, default isolation), s (stdio, isolation: shared), a (HTTP), b (tasks/get).
 */
type Build = "before" | "after";
type Path = { id: string; title: string; rows: (build: Build, cli: string) => Promise<LoadSpec[]> };

const servers: Server[] = [];
let redis: BenchRedis | undefined;

async function gateway(config: Record<string, unknown>, cli: string): Promise<Server> {
  const gate = await startGateway(config, { ...PLAIN_LAUNCH, cli });
  servers.push(gate);
  return gate;
}

async function wires(build: Build, gate: Server): Promise<LoadSpec[]> {
  return [
    { label: `${build}, legacy`, url: gate.url, request: legacyRequest(await openSession(gate.url), "tools/call", echoParams), cpuPid: gate.proc.pid },
    { label: `${build}, modern`, url: gate.url, request: modernRequest("tools/call", "echo", echoParams), cpuPid: gate.proc.pid },
  ];
}

let demoHttp: Promise<Server> | undefined;

const PATHS: Path[] = [
  { id: "d", title: "stdio passthrough (echo), default isolation (pool)", rows: async (b, cli) => wires(b, await gateway({ upstreams: [demoStdio()] }, cli)) },
  {
    id: "s",
    title: "stdio passthrough (echo), isolation: shared",
    rows: async (b, cli) => wires(b, await gateway({ upstreams: [{ ...demoStdio(), isolation: "shared" }] }, cli)),
  },
  {
    id: "a",
    title: "HTTP passthrough (echo)",
    rows: async (b, cli) => {
      demoHttp ??= startDemoHttp().then((s) => (servers.push(s), s));
      return wires(b, await gateway({ upstreams: [{ name: "demo", path: "/mcp", http: { url: (await demoHttp).url } }] }, cli));
    },
  },
  {
    id: "b",
    title: "tasks/get on a completed task (Redis store)",
    rows: async (b, cli) => {
      redis ??= await startRedis();
      const gate = await gateway(
        { store: { redisUrl: redis.url, keyPrefix: `builds-${b}:` }, upstreams: [demoStdio({ echo: { taskSupport: "required" } })] },
        cli,
      );
      const taskId = await createTask(gate.url, "echo", { text: "to be polled" }, `create-${b}`);
      if ((await untilEnded(gate.url, taskId)) !== "completed") throw new Error("the polled task did not complete");
      const verify = (body: string) => body.includes('"status":"completed"');
      return [{ label: `${b}, modern`, url: gate.url, request: modernRequest("tasks/get", taskId, { taskId }, WITH_TASKS), verify, cpuPid: gate.proc.pid }];
    },
  },
];

async function main(): Promise<void> {
  const base = process.env.BENCH_BASE;
  if (!base) throw new Error("BENCH_BASE must name another checkout of taskgate, built (its dist/cli.js)");
  const baseCli = join(resolve(base), "dist/cli.js");
  if (!existsSync(baseCli)) throw new Error(`${baseCli} is missing: build that checkout first`);
  const settings = readSettings(process.env);
  const pin = pinCores(cpus().length);
  const started = new Date().toISOString();
  const lines = [
    `Builds compared on ${started}: "before" is ${process.env.BENCH_BASE_NAME ?? "another build"}, "after" this checkout. ${describeRun(pin.pinning ? "servers pinned to one core, load to another" : `not pinned: ${pin.reason}`)}`,
    `Command: \`BENCH_BASE=<the build before> ${settings.command.replace("npm run bench", "node dist-bench/bench/builds.js")}\` (after \`npm run bench\` built this checkout). Load: autocannon, ${settings.load.connections} connections, ${settings.load.warmupS} s warm-up, ${settings.load.durationS} s measured per row in ${settings.rounds} turns. CPU-µs / req is taskgate's own process (user + system, /proc), its children not included.`,
    "",
  ];
  try {
    for (const path of PATHS.filter((p) => !settings.only.length || settings.only.includes(p.id))) {
      const specs = [...(await path.rows("before", baseCli)), ...(await path.rows("after", CLI))];
      const rows = await measureTogether(specs, settings.load, settings.rounds);
      lines.push(...section(path, rows));
    }
  } finally {
    await stopAll();
    removeConfigFiles();
    await redis?.close();
  }
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${started.replace(/[:.]/g, "-")}-builds.md`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stderr.write(`builds: report in ${file}\n`);
}

function describeRun(pinning: string): string {
  const m = describeMachine("-", pinning);
  return `${m.cpu}, ${m.cores} cores, node ${m.node}; ${pinning}; load average at the start ${m.loadAverage.join(", ")}.`;
}

function section(path: Path, rows: Measurement[]): string[] {
  const half = rows.length / 2;
  const out = [`#### ${path.id}. ${path.title}`, "", "| | req/s | p50 ms | CPU-µs / req | after / before: CPU, req/s |", "| --- | ---: | ---: | ---: | ---: |"];
  rows.forEach((m, i) => {
    const before = i >= half ? rows[i - half]! : undefined;
    const vs = before ? `${(m.cpuUsPerRequest! / before.cpuUsPerRequest!).toFixed(2)}×, ${(m.requestsPerS / before.requestsPerS).toFixed(2)}×` : "";
    out.push(`| ${m.label} | ${m.requestsPerS} | ${m.p50Ms} | ${m.cpuUsPerRequest ?? "-"} | ${vs} |`);
  });
  return [...out, ""];
}

main().catch((err: unknown) => {
  process.stderr.write(`builds: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  void stopAll().finally(() => process.exit(1));
});
