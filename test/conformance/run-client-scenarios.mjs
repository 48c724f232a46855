// Runs the MCP conformance suite's client scenarios against taskgate's upstream side
// (`npm run conformance:client`, after a build) and prints each scenario's check counts.
// The suite (@modelcontextprotocol/conformance, fetched by npx) needs Node 22; npx fetches that too,
// so this needs the npm registry, which is why `npm test` does not run it. Each scenario runs
// test/conformance/client.mjs, which puts taskgate in front of the scenario's server.
//
//   node test/conformance/run-client-scenarios.mjs [scenario ...]
import { spawn } from "node:child_process";
import { resolve } from "node:path";

const SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12";
const CLIENT = resolve(import.meta.dirname, "client.mjs");
const SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "request-metadata", "json-schema-2020-12-preservation"];
const SCENARIO_TIMEOUT_MS = 120_000;

function runScenario(scenario) {
  const command = `conformance client --command 'node ${CLIENT}' --scenario ${scenario}`;
  return new Promise((done) => {
    const child = spawn("npx", ["-y", "-p", "node@22", "-p", SUITE, "-c", command], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), SCENARIO_TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : SCENARIOS;
let failed = 0;
for (const scenario of chosen) {
  const { code, output } = await runScenario(scenario);
  const counts = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
  const summary = counts ? `${counts[1]}/${counts[2]} passed, ${counts[3]} failed, ${counts[4]} warnings` : "no result";
  const ok = code === 0 && counts !== null && counts[3] === "0";
  if (!ok) {
    failed++;
    const failures = output.split("\n").filter((line) => /FAILURE|conformance client \(/.test(line));
    process.stdout.write(`${failures.join("\n") || output.slice(-3_000)}\n`);
  }
  process.stdout.write(`${ok ? "ok  " : "FAIL"} ${scenario.padEnd(34)} ${summary}\n`);
}
process.exit(failed === 0 ? 0 : 1);
