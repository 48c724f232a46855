import { join, resolve } from "node:path";

/** The repository root: this file runs from dist-bench/bench/. */
export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = join(ROOT, "dist/cli.js");
export const DEMO = join(ROOT, "dist/demo/main.js");
export const MCP_PROXY = join(ROOT, "node_modules/.bin/mcp-proxy");
export const HONO_BASELINE = join(ROOT, "dist-bench/bench/fixtures/hono-baseline.js");
export const FLOOR_STDIO = join(ROOT, "dist-bench/bench/fixtures/floor-stdio.js");
export const FLOOR_HTTP = join(ROOT, "dist-bench/bench/fixtures/floor-http.js");
export const FLOOR_TASKS_GET = join(ROOT, "dist-bench/bench/fixtures/floor-tasks-get.js");
/** The SDK blocking fixture; with `http --stateless`, a fresh server and transport per POST. */
export const STATELESS_SDK = join(ROOT, "test/fixtures/blocking-server.mjs");
export const PROBE = join(ROOT, "dist-bench/bench/fixtures/probe.js");
export const RESULTS = join(ROOT, "bench/results");
