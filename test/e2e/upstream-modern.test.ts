import { randomBytes } from "node:crypto";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { elicitation: { form: {} } };
const ELICIT_TASKS = { ...WITH_TASKS, ...ELICIT };
const CONFIRM = { action: "accept", content: { confirm: true } } as const;

async function until(url: string, taskId: string, status: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      if (["completed", "failed", "cancelled"].includes(task?.status) && task.status !== status)
        throw new Error(`task ended ${task.status}: ${JSON.stringify(task)}`);
      return task?.status === status ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what: `task ${taskId} to be ${status}` },
  );
}

/** Each refused legacy request is one line of the 2026-07-28-only demo's log. */
const refusals = (output: string) => output.split("\n").filter((line) => line.includes("Rejected 2025-era request")).length;

// HTTP with the memory store, stdio (a pool of processes) with Redis: both transports, both stores.
describe.each([
  ["http", "memory"],
  ["stdio", "redis"],
] as const)("a 2026-07-28-only upstream over %s (%s store)", (transport, kind) => {
  let upstream: (RunningProcess & { mcpUrl: string }) | undefined;
  let gw: GatewayProcess;
  /** Where the upstream's own log lines end up: its own output (HTTP) or taskgate's (stdio). */
  const upstreamLog = () => (upstream ? upstream.output() : gw.output());
  let refusedAtStart = 0;

  beforeAll(async () => {
    if (transport === "http") upstream = await startDemoHttp(["--modern"]);
    const store = kind === "redis" ? { store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` } } : {};
    const where = upstream ? { http: { url: upstream.mcpUrl } } : { stdio: demoStdio(["--modern"]) };
    const tools = { deploy: { taskSupport: "required" }, hang: { taskSupport: "required" } };
    gw = await startGateway({ ...store, tasks: { detachAfterMs: 300, pollIntervalMs: 100 }, upstreams: [{ name: "demo", path: "/mcp", ...where, tools }] });
    refusedAtStart = refusals(upstreamLog());
  });
  afterAll(async () => Promise.all([gw?.stop(), upstream?.stop()]));

  it("becomes ready and says which generation it negotiated, in /readyz and the log", async () => {
    const res = await fetch(`${gw.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ready", upstreams: { demo: { generation: "modern", protocolVersion: "2026-07-28" } } });
    expect(gw.output()).toMatch(/"generation":"modern".*"upstream ready"/);
    // HTTP: the first request is already a 2026-07-28 one (server/discover), so no 2025-era request
    // reaches the upstream. stdio: the refused initialize was followed, not repeated: one per
    // process that ever negotiated.
    if (transport === "http") expect(refusedAtStart).toBe(0);
    else {
      expect(refusedAtStart).toBeGreaterThanOrEqual(1);
      expect(refusedAtStart).toBeLessThanOrEqual(2);
    }
  });

  it("lists and calls through a legacy 2025-11-25 session (SDK 1.x client)", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    expect(client.getServerVersion()).toMatchObject({ name: "taskgate-demo-modern" });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "sleep", "deploy", "survey"]));
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "through a session" } }))).toBe("through a session");
    await client.close();
  });

  it("lists and calls on the 2026-07-28 wire", async () => {
    const listed = await modern(gw.mcpUrl, "tools/list");
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(["echo", "survey"]));
    const called = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "stateless" } });
    expect(called.body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "stateless" }] });
  });

  it("turns the upstream's two MRTR rounds into a modern caller's, retrying upstream with the upstream's requestState", async () => {
    const call = { name: "survey", arguments: {} };
    const first = (await modern(gw.mcpUrl, "tools/call", call, { capabilities: ELICIT })).body.result;
    expect(first.resultType).toBe("input_required");
    const [nameKey, asked] = Object.entries(first.inputRequests)[0] as [string, any];
    expect(asked).toMatchObject({ method: "elicitation/create", params: { message: "Your name?" } });
    const second = (
      await modern(
        gw.mcpUrl,
        "tools/call",
        { ...call, inputResponses: { [nameKey]: { action: "accept", content: { name: "Ann" } } }, requestState: first.requestState },
        { capabilities: ELICIT },
      )
    ).body.result;
    expect(second.resultType).toBe("input_required");
    const [colourKey, next] = Object.entries(second.inputRequests)[0] as [string, any];
    // The upstream knows the name only from its own requestState, which taskgate echoed.
    expect(next.params.message).toBe("Ann, your colour?");
    const done = (
      await modern(
        gw.mcpUrl,
        "tools/call",
        { ...call, inputResponses: { [colourKey]: { action: "accept", content: { colour: "red" } } }, requestState: second.requestState },
        { capabilities: ELICIT },
      )
    ).body.result;
    expect(done).toMatchObject({ resultType: "complete", content: [{ text: "Ann likes red" }] });
  });

  it("asks a legacy plain call's questions on the call's own stream, one per upstream round", async () => {
    const asked: string[] = [];
    const answer = (message: string): Record<string, string> => (message === "Your name?" ? { name: "Bo" } : { colour: "blue" });
    const { client } = await connectClient(gw.mcpUrl, { elicit: (message) => (asked.push(message), { action: "accept", content: answer(message) }) });
    const result = await client.callTool({ name: "survey", arguments: {} });
    expect(asked).toEqual(["Your name?", "Bo, your colour?"]);
    expect(textOf(result)).toBe("Bo likes blue");
    await client.close();
  });

  it("runs the upstream's MRTR round of a prompts/get as the caller's: a modern round, or a request on a session's stream", async () => {
    const get = { name: "confirm-greeting", arguments: { name: "Ann" } };
    const first = (await modern(gw.mcpUrl, "prompts/get", get, { capabilities: ELICIT })).body.result;
    expect(first.resultType).toBe("input_required");
    const key = Object.keys(first.inputRequests)[0]!;
    const done = (
      await modern(gw.mcpUrl, "prompts/get", { ...get, inputResponses: { [key]: CONFIRM }, requestState: first.requestState }, { capabilities: ELICIT })
    ).body.result;
    expect(done).toMatchObject({ resultType: "complete", messages: [{ content: { text: "Say hello to Ann." } }] });
    const { client } = await connectClient(gw.mcpUrl, { elicit: () => ({ action: "decline" }) });
    const prompt = await client.getPrompt({ name: "confirm-greeting", arguments: { name: "Bo" } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: "Do not greet Bo." });
    await client.close();
  });

  it("answers a tasks-extension task's question with tasks/update", async () => {
    const created = (await modern(gw.mcpUrl, "tools/call", { name: "deploy", arguments: { env: "prod" } }, { capabilities: ELICIT_TASKS })).body.result;
    expect(created.resultType).toBe("task");
    const waiting = await until(gw.mcpUrl, created.taskId, "input_required");
    const [key, asked] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(asked).toMatchObject({ method: "elicitation/create", params: { message: "Deploy to prod?" } });
    await modern(gw.mcpUrl, "tasks/update", { taskId: created.taskId, inputResponses: { [key]: CONFIRM } }, { capabilities: WITH_TASKS });
    const done = await until(gw.mcpUrl, created.taskId, "completed");
    expect(done.result.content[0].text).toBe("Deployed to prod");
  });

  it("sends the question of a task of the 2025-11-25 tasks as a related request and completes it (SDK callToolStream)", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, { elicit: (message) => (asked.push(message), CONFIRM) });
    const seen: Array<{ type: string; result?: unknown }> = [];
    for await (const event of client.experimental.tasks.callToolStream({ name: "deploy", arguments: { env: "staging" } }, CallToolResultSchema, { task: {} }))
      seen.push(event);
    expect(asked).toEqual(["Deploy to staging?"]);
    expect(seen[0]?.type).toBe("taskCreated");
    expect(textOf(seen.at(-1)?.result)).toBe("Deployed to staging");
    await client.close();
  });

  it("detaches a slow call into a task that completes with the upstream's result", async () => {
    const created = (await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 1 } }, { capabilities: WITH_TASKS })).body.result;
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    const done = await until(gw.mcpUrl, created.taskId, "completed");
    expect(done.result).toMatchObject({ content: [{ type: "text", text: "Slept 1 s" }] });
  });

  it("stops the upstream's work when the task is cancelled (HTTP: its stream closed; stdio: notifications/cancelled)", async () => {
    const created = (await modern(gw.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    await waitFor(() => upstreamLog().includes("hang started"), { what: "the upstream to start hanging" });
    await modern(gw.mcpUrl, "tasks/cancel", { taskId: created.taskId }, { capabilities: WITH_TASKS });
    await waitFor(() => upstreamLog().includes("hang cancelled"), { what: "the upstream to see the cancel" });
    await until(gw.mcpUrl, created.taskId, "cancelled");
  });

  it("sent no initialize after the negotiation, however many calls followed", async () => {
    // Calls of its own, after the negotiation, on both wires: run alone, the test still has calls
    // to count refusals across. Three tasks at once run alone each, on pooled processes (stdio) or
    // upstream sessions (HTTP) started for them, and each of those negotiates too.
    const tasks = await Promise.all(
      [1, 2, 3].map(
        async () => (await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 1 } }, { capabilities: WITH_TASKS })).body.result,
      ),
    );
    for (const task of tasks) expect((await until(gw.mcpUrl, task.taskId, "completed")).result).toMatchObject({ content: [{ text: "Slept 1 s" }] });
    const called = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "modern after" } });
    expect(called.body.result).toMatchObject({ content: [{ text: "modern after" }] });
    const { client } = await connectClient(gw.mcpUrl);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "legacy after" } }))).toBe("legacy after");
    await client.close();
    expect(refusals(upstreamLog())).toBe(refusedAtStart);
  });
});
