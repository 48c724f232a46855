import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { CLI, DEMO, HONO_BASELINE, MCP_PROXY, STATELESS_SDK } from "../paths.js";
import { openSession } from "./mcp.js";
import { startProcess, type Tracked } from "./procs.js";
import { profileArgs } from "./profiles.js";
import { freePort, GiveUp, waitFor } from "./wait.js";

export interface Server {
  proc: Tracked;
  url: string;
}

let configDir: string | undefined;

/** The run's config files live in one temporary directory, removed at the end. */
export function removeConfigFiles(): void {
  if (configDir) rmSync(configDir, { recursive: true, force: true });
  configDir = undefined;
}

/** How to start node for taskgate: extra flags (the probe) and environment. */
export interface Launch {
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  /** Another build's dist/cli.js (bench/builds.ts); this checkout's by default. */
  cli?: string;
}

/** Node as it comes: no extra flags or environment. */
export const PLAIN_LAUNCH: Launch = { nodeArgs: [], env: {} };

let logLevel = "info";

/** The log level every taskgate of the run gets (BENCH_LOG_LEVEL; taskgate's own default, info, unless set). */
export function setGatewayLogLevel(level: string): void {
  logLevel = level;
}

/** A taskgate process from a config object, at the run's log level (see setGatewayLogLevel). */
export async function startGateway(config: Record<string, unknown>, launch: Launch = PLAIN_LAUNCH): Promise<Server> {
  const port = await freePort();
  configDir ??= mkdtempSync(join(tmpdir(), "taskgate-bench-"));
  const file = join(configDir, `taskgate-${port}.yaml`);
  writeFileSync(file, stringify({ log: { level: logLevel }, ...config, listen: { host: "127.0.0.1", port } }));
  const proc = startProcess("taskgate", process.execPath, [...profileArgs(), ...launch.nodeArgs, launch.cli ?? CLI, "--config", file], launch.env);
  const url = `http://127.0.0.1:${port}`;
  await ready(proc, "taskgate /readyz", async () => (await fetch(`${url}/readyz`)).status === 200);
  return { proc, url: `${url}/mcp` };
}

export async function startDemoHttp(launch: Launch = PLAIN_LAUNCH): Promise<Server> {
  const port = await freePort();
  const proc = startProcess("demo-http", process.execPath, [...launch.nodeArgs, DEMO, "--http", String(port)], launch.env);
  await ready(proc, "the demo server to listen", () => proc.output().includes("listening"));
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}

/** An SDK server run statelessly, as serverless deployments run it: a fresh server and transport per POST, no session. */
export async function startStatelessSdk(launch: Launch = PLAIN_LAUNCH): Promise<Server> {
  const port = await freePort();
  const proc = startProcess("stateless-sdk", process.execPath, [...launch.nodeArgs, STATELESS_SDK, "http", "--stateless", "--port", String(port)], launch.env);
  await ready(proc, "the stateless SDK server to listen", () => proc.output().includes("listening"));
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}

/** mcp-proxy in its stdio → Streamable HTTP mode, in front of the same demo server. */
export async function startMcpProxy(): Promise<Server> {
  const port = await freePort();
  const proc = startProcess("mcp-proxy", MCP_PROXY, ["--port", String(port), "--server", "stream", "--", process.execPath, DEMO]);
  const url = `http://127.0.0.1:${port}/mcp`;
  await ready(proc, "mcp-proxy to open a session", async () => Boolean(await openSession(url)));
  return { proc, url };
}

export async function startHono(): Promise<Server> {
  return startFixture("hono-baseline", HONO_BASELINE, []);
}

/** A bench fixture (`node FILE PORT ...args`) that says "listening" on stderr once it serves. */
export async function startFixture(name: string, file: string, args: string[], launch: Launch = PLAIN_LAUNCH): Promise<Server> {
  const port = await freePort();
  const proc = startProcess(name, process.execPath, [...profileArgs(), ...launch.nodeArgs, file, String(port), ...args], launch.env);
  await ready(proc, `${name} to listen`, () => proc.output().includes("listening"));
  return { proc, url: `http://127.0.0.1:${port}` };
}

async function ready(proc: Tracked, what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  await waitFor(
    async () => {
      if (proc.proc.exitCode !== null) throw new GiveUp(`${proc.name} exited`);
      return check();
    },
    what,
    20_000,
    100,
  ).catch(async (err: Error) => {
    await proc.stop();
    throw new Error(`${err.message}\n${proc.name} said: ${proc.output().slice(-2000)}`);
  });
}

/** The demo server over stdio, as an upstream entry of a taskgate config. */
export function demoStdio(tools: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "demo", path: "/mcp", stdio: { command: process.execPath, args: [DEMO] }, tools };
}
