// The client under test in the MCP conformance suite's client scenarios: taskgate's upstream side.
// The suite starts a test server per scenario and runs this with the server's URL as the last
// argument and the scenario's name in MCP_CONFORMANCE_SCENARIO. This starts taskgate (built, in
// dist/; memory store) with that server as its HTTP upstream, `generation: auto`, then does through
// taskgate, with the SDK 1.x client, what the scenario expects of a client. Plain JavaScript, so
// that it runs with `node` alone under the Node version the suite needs.
//
//   node test/conformance/client.mjs <server-url>     (run by test/conformance/run-client-scenarios.mjs)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { stringify } from "yaml";

const ROOT = resolve(import.meta.dirname, "../..");
const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const READY_TIMEOUT_MS = 15_000;

/** What each scenario asks of a client, done through taskgate. */
const SCENARIOS = {
  initialize: async (client) => void (await client.listTools()),
  tools_call: async (client) => expectText(await client.callTool({ name: "add_numbers", arguments: { a: 2, b: 3 } }), "The sum of 2 and 3 is 5"),
  // The upstream closes the call's stream after a priming event (retry: 500); taskgate resumes it with GET and Last-Event-ID.
  "sse-retry": async (client) => expectText(await client.callTool({ name: "test_reconnection", arguments: {} }), "Reconnection test completed successfully"),
  "request-metadata": async (client) => void (await client.listTools()),
  // The server asks with server.request (no related request: over HTTP, on the session's GET stream);
  // the caller accepts with no content and its SDK fills the schema's defaults (SEP-1034).
  "elicitation-sep1034-client-defaults": async (client) => {
    const result = await client.callTool({ name: "test_client_elicitation_defaults", arguments: {} });
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`);
  },
  // Hand the focal tool's inputSchema, as received through taskgate, back to the upstream's echo tool.
  "json-schema-2020-12-preservation": async (client) => {
    const { tools } = await client.listTools();
    const focal = tools.find((t) => t.name === "json_schema_2020_12_tool");
    const echo = tools.find((t) => t.name !== "json_schema_2020_12_tool");
    if (!focal || !echo) throw new Error(`tools/list through taskgate lacks the scenario's tools: ${tools.map((t) => t.name).join(", ")}`);
    await client.callTool({ name: echo.name, arguments: { schema: focal.inputSchema } });
  },
};

function expectText(result, text) {
  const got = (result.content ?? []).map((c) => c.text ?? "").join("");
  if (got !== text) throw new Error(`expected ${JSON.stringify(text)}, got ${JSON.stringify(result)}`);
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function waitReady(url, gateway) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gateway.exitCode !== null) throw new Error(`taskgate exited with ${gateway.exitCode}`);
    const status = await fetch(url).then(
      (r) => r.status,
      () => undefined,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`taskgate was not ready within ${READY_TIMEOUT_MS} ms`);
}

async function main() {
  const run = SCENARIOS[scenario];
  if (!run) throw new Error(`no client steps for scenario '${scenario}'`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "taskgate-conformance-"));
  const file = join(dir, "taskgate.yaml");
  const config = { log: { level: "warn" }, listen: { host: "127.0.0.1", port }, upstreams: [{ name: "scenario", path: "/mcp", http: { url: serverUrl } }] };
  writeFileSync(file, stringify(config));
  const gateway = spawn(process.execPath, [join(ROOT, "dist/cli.js"), "--config", file], { stdio: ["ignore", "inherit", "inherit"] });
  const exited = new Promise((r) => gateway.once("exit", r));
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, gateway);
    // Capabilities a host would declare: taskgate declares the caller's own upstream on the 2026-07-28 wire.
    const capabilities = { roots: { listChanged: true }, sampling: {}, elicitation: { form: { applyDefaults: true } } };
    const client = new Client({ name: "taskgate-conformance-client", version: "1.0.0" }, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    try {
      await run(client);
    } finally {
      await client.close();
    }
  } finally {
    gateway.kill("SIGTERM");
    const timer = setTimeout(() => gateway.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`conformance client (${scenario}): ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
