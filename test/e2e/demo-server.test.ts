import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { DEMO, ROOT, runNode, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";
import { textOf } from "../helpers/mcp-client.js";
import { runDemoServer } from "../../src/demo/server.js";

/**
 * The demo server is spawned from its compiled entry (dist/demo/main.js), as taskgate and users
 * run it. `npm test` builds first; when run alone, the build happens here if the output is
 * missing or older than src/demo.
 */
function ensureDemoBuilt(): void {
  const sources = join(ROOT, "src/demo");
  const newest = Math.max(...readdirSync(sources, { recursive: true }).map((f) => statSync(join(sources, String(f))).mtimeMs));
  const fresh = (): boolean => existsSync(DEMO) && statSync(DEMO).mtimeMs >= newest;
  if (fresh()) return;
  try {
    execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "pipe" });
  } catch {
    // Type errors elsewhere in src still emit JavaScript; whether the demo was built is checked next.
  }
  if (!fresh()) throw new Error(`${DEMO} could not be built`);
}

interface Connected {
  transport: Transport;
  /** What the demo server wrote on stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

async function connectStdio(): Promise<Connected> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [DEMO], cwd: ROOT, stderr: "pipe" });
  let log = "";
  transport.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  // Closing the client closes the transport, which ends the child (stdin, then signals).
  return { transport, log: () => log, stop: async () => undefined };
}

async function connectHttp(): Promise<Connected> {
  const demo: RunningProcess = runNode([DEMO, "--http", "0"]);
  const url = await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(demo.output())?.[1], {
    what: "the demo server's listening line",
  }).catch(async (err: Error) => {
    await demo.stop("SIGKILL");
    throw new Error(`${err.message}\n${demo.output()}`);
  });
  return { transport: new StreamableHTTPClientTransport(new URL(url)), log: demo.output, stop: () => demo.stop() };
}

beforeAll(ensureDemoBuilt, 120_000);

describe.each([
  { over: "stdio", connect: connectStdio },
  { over: "Streamable HTTP", connect: connectHttp },
])("the demo server over $over", ({ connect }) => {
  let server: Connected;
  let client: Client;
  let questions: ElicitRequest["params"][];
  let answer: ElicitResult;

  beforeAll(async () => {
    server = await connect();
    client = new Client({ name: "demo-test", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params);
      return answer;
    });
    await client.connect(server.transport);
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  beforeEach(() => {
    questions = [];
    answer = { action: "decline" };
  });

  it("lists every tool with an input schema, a description and its annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "sleep", "deploy", "fail", "crash", "hang", "routed", "change-lists"]);
    for (const tool of tools) {
      expect(tool.description).toBeTruthy();
      expect(tool.inputSchema.type).toBe("object");
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("echo")?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("sleep")?.annotations?.idempotentHint).toBe(true);
    expect(byName.get("deploy")?.annotations?.destructiveHint).toBe(true);
    expect(byName.get("sleep")?.inputSchema.required).toEqual(["seconds"]);
    expect(byName.get("routed")?.inputSchema.properties?.region).toMatchObject({ type: "string", "x-mcp-header": "Region" });
  });

  it("lists one prompt and one resource template, both of which ask first", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([expect.objectContaining({ name: "confirm-greeting", arguments: [expect.objectContaining({ name: "name", required: true })] })]);
    expect((await client.listResources()).resources).toEqual([]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: "demo://ask/{topic}", mimeType: "text/plain" })]);
  });

  it("asks before giving the greeting prompt, and gives the refusal when not confirmed", async () => {
    answer = { action: "accept", content: { confirm: true } };
    const confirmed = await client.getPrompt({ name: "confirm-greeting", arguments: { name: "Ada" } });
    expect(confirmed.messages).toEqual([{ role: "user", content: { type: "text", text: "Say hello to Ada." } }]);
    expect(questions).toEqual([expect.objectContaining({ message: "Greet Ada?", requestedSchema: expect.objectContaining({ required: ["confirm"] }) })]);
    answer = { action: "decline" };
    expect((await client.getPrompt({ name: "confirm-greeting", arguments: { name: "Ada" } })).messages[0]?.content).toEqual({
      type: "text",
      text: "Do not greet Ada.",
    });
    await expect(client.getPrompt({ name: "nope" })).rejects.toThrow(/Unknown prompt/);
  });

  it("asks about a demo://ask/ topic before reading it", async () => {
    answer = { action: "accept", content: { answer: "sunny" } };
    const { contents } = await client.readResource({ uri: "demo://ask/weather" });
    expect(contents).toEqual([{ uri: "demo://ask/weather", mimeType: "text/plain", text: "weather: sunny" }]);
    expect(questions).toEqual([expect.objectContaining({ message: "What about weather?" })]);
    await expect(client.readResource({ uri: "demo://other" })).rejects.toThrow(/Unknown resource/);
  });

  it("echoes the text", async () => {
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hello" } }))).toBe("hello");
  });

  it("sleeps fractions of a second and reports progress on the caller's token", async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "sleep", arguments: { seconds: 0.4, progressIntervalMs: 100 } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    expect(textOf(result)).toBe("Slept 0.4 s");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((p) => p.total === 0.4 && /^Slept [\d.]+\/0\.4 s$/.test(p.message ?? ""))).toBe(true);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(values.every((v) => v > 0 && v <= 0.4)).toBe(true);
    // The last tick says the work is done. It goes out just before the result, and the SDK client
    // handles a notification a microtask later than a response read with it, after which it no
    // longer knows the token: over stdio it may be dropped. When it arrives, it is the last.
    expect(values.slice(0, -1).every((v) => v < 0.4)).toBe(true);
  });

  it("asks before deploying and deploys with progress when confirmed", async () => {
    answer = { action: "accept", content: { confirm: true } };
    const progress: Progress[] = [];
    // Deploy reports once a second and at the end: 1.1 s gives two progress notifications, the
    // second of which the SDK client may drop (see above).
    const result = await client.callTool({ name: "deploy", arguments: { service: "web", seconds: 1.1 } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    expect(textOf(result)).toBe("Deployed web");
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatchObject({ message: "Deploy web?", requestedSchema: { properties: { confirm: { type: "boolean" } } } });
    const ticks = [
      expect.objectContaining({ total: 1.1, message: expect.stringMatching(/^Slept 1\/1\.1 s$/) }),
      expect.objectContaining({ progress: 1.1, total: 1.1, message: "Slept 1.1/1.1 s" }),
    ];
    expect(progress).toEqual(ticks.slice(0, Math.max(1, progress.length)));
  });

  it("does not deploy when the question is declined or not confirmed", async () => {
    const call = () => client.callTool({ name: "deploy", arguments: { service: "db", seconds: 30 } });
    expect(textOf(await call())).toBe("Deployment of db cancelled");
    answer = { action: "accept", content: { confirm: false } };
    expect(textOf(await call())).toBe("Deployment of db cancelled");
    expect(questions).toHaveLength(2);
  });

  it("fails with a tool error result", async () => {
    const result = await client.callTool({ name: "fail", arguments: { message: "no luck" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("no luck");
  });

  it("crashes with a JSON-RPC error carrying its code and data", async () => {
    await expect(client.callTool({ name: "crash", arguments: { message: "boom" } })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("boom"),
      data: { tool: "crash" },
    });
  });

  it("answers an unknown tool or bad arguments with -32602", async () => {
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await expect(client.callTool({ name: "sleep", arguments: { seconds: "soon" } })).rejects.toMatchObject({ code: -32602 });
  });

  it("hangs until cancelled, then stops", async () => {
    const cancel = new AbortController();
    const call = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: cancel.signal });
    await waitFor(() => server.log().includes("hang started"), { what: "the hang call to start" });
    cancel.abort("enough");
    await expect(call).rejects.toThrow();
    await waitFor(() => server.log().includes("hang cancelled"), { what: "the server to stop the hang call" });
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "still here" } }))).toBe("still here");
  });

  it("stops sleeping when cancelled", async () => {
    const cancel = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { seconds: 60, progressIntervalMs: 50 } }, undefined, {
      signal: cancel.signal,
      onprogress: () => cancel.abort("enough"),
    });
    await expect(call).rejects.toThrow();
    await waitFor(() => server.log().includes("sleep cancelled"), { what: "the server to stop sleeping" });
  });
});

describe("the demo server process", () => {
  it("exits cleanly on SIGTERM in HTTP mode, with its listening line on stderr only", async () => {
    const demo = runNode([DEMO, "--http", "0", "--host", "127.0.0.1"]);
    let stdout = "";
    demo.proc.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(() => demo.output().includes("demo server listening on http://127.0.0.1:"), { what: "listening" });
    await demo.stop("SIGTERM");
    expect(demo.proc.exitCode).toBe(0);
    expect(stdout).toBe("");
  });

  it("exits when its stdin ends in stdio mode, even during a call", async () => {
    const child = spawn(process.execPath, [DEMO], { cwd: ROOT, stdio: ["pipe", "ignore", "ignore"] });
    const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {} } };
    child.stdin.end(`${JSON.stringify(request)}\n`);
    await waitFor(() => child.exitCode !== null, { what: "exit after stdin ended" }).finally(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    expect(child.exitCode).toBe(0);
  });

  it("refuses bad arguments with exit code 2", async () => {
    const demo = runNode([DEMO, "--http", "eighty"]);
    await waitFor(() => demo.proc.exitCode !== null, { what: "exit" });
    expect(demo.proc.exitCode).toBe(2);
    expect(demo.output()).toContain('--http: expected a port number (0-65535), got "eighty"');
  });
});

describe("runDemoServer in process", () => {
  it("serves Streamable HTTP on a free port and closes", async () => {
    const running = await runDemoServer({ http: { port: 0 }, log: () => undefined });
    const client = new Client({ name: "demo-test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${running.port}/mcp`)));
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "in process" } }))).toBe("in process");
    } finally {
      await client.close();
      await running.close();
    }
    await expect(fetch(`http://127.0.0.1:${running.port}/mcp`)).rejects.toThrow();
  });

  it("answers requests without a session or to an unknown one with JSON-RPC errors", async () => {
    const running = await runDemoServer({ http: { port: 0 }, log: () => undefined });
    const url = `http://127.0.0.1:${running.port}/mcp`;
    try {
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const noSession = await fetch(url, { method: "POST", headers, body: list });
      expect(noSession.status).toBe(400);
      const unknown = await fetch(url, { method: "POST", headers: { ...headers, "mcp-session-id": "nope" }, body: list });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
      expect((await fetch(`http://127.0.0.1:${running.port}/elsewhere`)).status).toBe(404);
    } finally {
      await running.close();
    }
  });
});
