import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, relative } from "node:path";
import { describeMachine } from "./lib/machine.js";
import { killAllNow, pinCores, stopAll } from "./lib/procs.js";
import { startRedis } from "./lib/redis.js";
import { renderMarkdown, type BenchRun } from "./lib/report.js";
import { ScenarioOutput, type BenchContext, type Scenario } from "./lib/result.js";
import { removeConfigFiles, setGatewayLogLevel } from "./lib/servers.js";
import { enableProfiles, profileScenario, summarizeProfiles } from "./lib/profiles.js";
import { CLI, FLOOR_HTTP, FLOOR_STDIO, FLOOR_TASKS_GET, HONO_BASELINE, RESULTS, ROOT } from "./paths.js";
import { httpPassthrough } from "./scenarios/http-passthrough.js";
import { cluster } from "./scenarios/cluster.js";
import { endingsTogether } from "./scenarios/endings-together.js";
import { heldAtRest } from "./scenarios/held-at-rest.js";
import { inFlight } from "./scenarios/in-flight.js";
import { stdioPassthrough } from "./scenarios/stdio-passthrough.js";
import { taskThroughput } from "./scenarios/task-throughput.js";
import { taskQueue } from "./scenarios/task-queue.js";
import { tasksGet } from "./scenarios/tasks-get.js";
import { replicatedCreate } from "./scenarios/replicated-create.js";
import { readSettings } from "./settings.js";

const SCENARIOS: readonly Scenario[] = [
  httpPassthrough,
  tasksGet,
  taskThroughput,
  stdioPassthrough,
  inFlight,
  heldAtRest,
  endingsTogether,
  cluster,
  taskQueue,
  replicatedCreate,
];

/** `npm run bench`: every scenario in one run, side by side, then the JSON and markdown reports. */
async function main(): Promise<void> {
  const settings = readSettings(process.env);
  for (const file of [CLI, HONO_BASELINE, FLOOR_STDIO, FLOOR_HTTP, FLOOR_TASKS_GET])
    if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run bench does)`);
  const pin = pinCores(cpus().length);
  const redis = await startRedis();
  const stamp = new Date().toISOString();
  const base = join(RESULTS, stamp.replace(/[:.]/g, "-"));
  const run: BenchRun = {
    startedAt: stamp,
    command: settings.command,
    logLevel: settings.logLevel,
    rounds: settings.rounds,
    roundsOne: settings.roundsOne,
    machine: describeMachine(
      (await redis.info("server")).get("redis_version") ?? "?",
      pin.pinning
        ? `load generator pinned to core ${pin.pinning.load}, servers (taskgate, upstreams, baselines, redis) to core ${pin.pinning.servers} with taskset`
        : `not pinned: ${pin.reason}`,
    ),
    load: settings.load,
    scenarios: [],
  };
  mkdirSync(RESULTS, { recursive: true });
  setGatewayLogLevel(settings.logLevel);
  if (settings.profile) enableProfiles(join(RESULTS, "profiles", stamp.replace(/[:.]/g, "-")));
  const ctx: BenchContext = {
    redis,
    load: settings.load,
    pinning: pin.pinning,
    inFlightTasks: settings.inFlightTasks,
    clusterCalls: settings.clusterCalls,
    clusterWave: settings.clusterWave,
    heldLevels: settings.heldLevels,
    burstCalls: settings.burstCalls,
    queueTasks: settings.queueTasks,
    queueSeconds: settings.queueSeconds,
    rounds: settings.rounds,
    roundsOne: settings.roundsOne,
  };
  try {
    for (const scenario of SCENARIOS) {
      if (settings.only.length ? !settings.only.includes(scenario.id) : scenario.optIn) continue;
      run.scenarios.push(await runScenario(scenario, ctx));
      // Written after every scenario: an interrupted run still leaves what it measured.
      writeFileSync(`${base}.json.tmp`, JSON.stringify(run, null, 2));
    }
  } finally {
    await redis.close();
    await stopAll();
    removeConfigFiles();
  }
  const markdown = renderMarkdown(run);
  writeFileSync(`${base}.json`, `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown);
  rmSync(`${base}.json.tmp`, { force: true });
  process.stdout.write(markdown);
  process.stderr.write(`bench: results in bench/results/${base.slice(RESULTS.length + 1)}.{json,md}\n`);
}

async function runScenario(scenario: Scenario, ctx: BenchContext) {
  const out = new ScenarioOutput(scenario);
  const started = Date.now();
  process.stderr.write(`bench: ${scenario.id}. ${scenario.title} ...\n`);
  const profiles = profileScenario(scenario.id);
  try {
    await scenario.run(ctx, out);
  } catch (err) {
    // One scenario failing (a feature still being built) must not cost the others.
    out.fail(err);
    process.stderr.write(`bench: ${scenario.id} failed: ${out.result.error}\n`);
  }
  // The scenario has stopped its processes: their profiles are written.
  if (profiles) {
    try {
      out.result.profiles = summarizeProfiles(profiles, out.result.measurements);
      process.stderr.write(`bench: ${scenario.id} profiles in ${relative(ROOT, profiles)}\n`);
    } catch (err) {
      out.note(`profiles could not be read: ${(err as Error).message}`);
    }
  }
  process.stderr.write(`bench: ${scenario.id} took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return out.result;
}

function bail(signal: string): void {
  process.stderr.write(`bench: ${signal}, stopping everything it started\n`);
  killAllNow();
  removeConfigFiles();
  process.exit(130);
}

process.once("SIGINT", () => bail("SIGINT"));
process.once("SIGTERM", () => bail("SIGTERM"));
process.once("exit", () => killAllNow());

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  killAllNow();
  removeConfigFiles();
  process.exit(1);
});
