#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import type { Gateway } from "./app.js";
import { tasksCommand, TASKS_USAGE } from "./admin/tasks-command.js";
import { packageVersion } from "./util/version.js";

const USAGE = `Usage:
  taskgate --version | --help
  taskgate [--config FILE] [--port N] [--host H] [--redis URL | --redis-cluster HOST:PORT,...] [--upstream SPEC] [--log-level L]
  taskgate check-config FILE [FILE...]
  taskgate demo-server [--http PORT] [--host H] [--native-tasks | --modern [--tasks-extension]]
${TASKS_USAGE.replace("Usage:\n", "")}

SPEC is stdio:<command line> or an http(s) URL. Without --config or --upstream, taskgate runs in
front of its bundled demo server over stdio. Every flag has a TASKGATE_* environment variable.`;

/** The bundled demo server, next to this file once built. */
const DEMO_MAIN = fileURLToPath(new URL("./demo/main.js", import.meta.url));

const defaultUpstream = () => ({ stdio: { command: process.execPath, args: [DEMO_MAIN] } });
const processOut = { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };

/**
 * Each command imports only what it runs: the gateway does not load the demo server, and
 * `taskgate demo-server` (a pool's upstream process, started once per isolated call)
 * does not load the gateway.
 */
async function main(argv: string[]): Promise<number> {
  if (argv[0] === "demo-server") return (await import("./demo/command.js")).demoServerCommand(argv.slice(1));
  if (argv[0] === "tasks") return tasksCommand(argv.slice(1), process.env);
  if (argv[0] === "check-config") {
    const { checkConfigCommand } = await import("./config/check-command.js");
    return checkConfigCommand(argv.slice(1), process.env, process.cwd(), defaultUpstream, processOut);
  }
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`taskgate ${packageVersion()}\n`);
    return 0;
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [{ startGateway }, { formatProblems, loadConfig }, { createLogger }] = await Promise.all([
    import("./app.js"),
    import("./config/load.js"),
    import("./observability/logger.js"),
  ]);
  const loaded = loadConfig({
    argv,
    env: process.env,
    cwd: process.cwd(),
    defaultUpstream,
  });
  if (!loaded.ok) {
    process.stderr.write(`taskgate: the configuration has problems:\n${formatProblems(loaded.problems)}\n`);
    return 2;
  }
  limitHeapGrowth(loaded.config.memory.heapGrowthPercent);
  setFlagsFromString("--no-allocation-site-pretenuring");
  const logger = createLogger(loaded.config.log.level, {}, { format: loaded.config.log.format, noColour: Boolean(process.env["NO_COLOR"]) });
  // A promise nobody awaited that failed is a bug, but not one worth every caller's open call:
  // say so loudly and keep serving (tasks survive a crash; the synchronous calls in flight would not).
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled promise rejection: a bug in taskgate; still serving"));
  const gateway = await startGateway(loaded.config, logger);
  stopOnSignals(gateway, (msg) => logger.info(msg));
  return 0;
}

/**
 * `memory.heapGrowthPercent`: V8 reads its heap-growing factor each time it sets the next limit
 * after a full collection, so setting the flag at start takes effect for the whole process. 0
 * leaves V8's own heuristic, which lets the old generation grow up to four times the live data
 * between collections: right for short bursts, but a gateway holding 10,000 calls keeps what a
 * burst of creates made it commit.
 */
function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/*
 * `--no-allocation-site-pretenuring`, set at start like the flag above (V8 reads it at each young
 * collection): V8 moves an allocation site whose objects survived one young collection into the
 * old generation from then on. A gateway's objects live as long as one request, yet a site that
 * once served slower requests (the general HTTP path's) stayed pretenured, and a pretenured
 * object keeps what it points to alive through every young collection until the next full one:
 * after a few seconds of other traffic, young collections copied twice as much and each poll of
 * the poll path cost a quarter more CPU (bench b, docs/contributing/performance.md). Without it
 * every object starts young, as the request-scoped garbage of a server wants.
 */

function stopOnSignals(gateway: Gateway, log: (msg: string) => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal} received: shutting down`);
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`taskgate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
