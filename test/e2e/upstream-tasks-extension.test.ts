import { randomBytes } from "node:crypto";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { JsonRpcRequest } from "../../src/jsonrpc/message.js";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { ExtensionTasks, offersTasksExtension } from "../../src/upstream/native-tasks/tasks-extension.js";
import type { UpstreamQuestion, UpstreamTaskEvents, UpstreamTaskState } from "../../src/upstream/native-tasks/upstream-tasks.js";
import { httpConfig, testLogger } from "../fixtures/upstreams.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { FAST_TASKS, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

const CLIENT = { sessionId: "front-1", capabilities: { elicitation: { form: {} } } };

/** The bridge's side of the events, recorded. */
function recorder(): { events: UpstreamTaskEvents; states: UpstreamTaskState[]; questions: UpstreamQuestion[]; taken: string[] } {
  const states: UpstreamTaskState[] = [];
  const questions: UpstreamQuestion[] = [];
  const taken: string[] = [];
  const events: UpstreamTaskEvents = { status: (s) => void states.push(s), question: (q) => void questions.push(q), withdrawn: (k) => void taken.push(k) };
  return { events, states, questions, taken };
}

const call = (name: string, args: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: "2.0",
  id: "front-7",
  method: "tools/call",
  params: { name, arguments: args },
});

// The upstream half of the task-native bridge for the tasks extension, on a real 2026-07-28
// server that runs a tool as its own task (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
describe("the io.modelcontextprotocol/tasks extension upstream (demo --modern --tasks-extension over HTTP)", () => {
  let upstream: RunningProcess & { mcpUrl: string };
  const connectors: HttpConnector[] = [];
  const connect = async () => {
    const c = new HttpConnector("ext", httpConfig(upstream.mcpUrl), testLogger);
    connectors.push(c);
    await c.start();
    return c;
  };
  beforeAll(async () => {
    upstream = await startDemoHttp(["--modern", "--tasks-extension"]);
  });
  afterAll(async () => {
    await Promise.all(connectors.map((c) => c.close()));
    await upstream?.stop();
  });

  it("sees the extension in server/discover and lets every tool become a task", async () => {
    const c = await connect();
    expect(c.generation()).toBe("modern");
    expect(offersTasksExtension(c)).toBe(true);
    expect(await new ExtensionTasks(c, true).support("research")).toBe("optional");
  });

  it("bridges a task the upstream runs itself: its question, the answer by tasks/update, its inline result", async () => {
    const tasks = new ExtensionTasks(await connect(), true);
    const seen = recorder();
    const started = await tasks.start(CLIENT, call("research", { topic: "owls", seconds: 0.1 }), { ttlMs: 60_000 }, seen.events);
    if (!("task" in started)) throw new Error(`expected a task, got ${JSON.stringify(started.response)}`);
    expect(started.state).toMatchObject({ status: "working", ttlMs: 600_000, pollIntervalMs: 100 });
    const result = started.link.result();
    const question = await waitFor(() => seen.questions[0], { what: "the upstream's question" });
    expect(question).toEqual({
      key: "depth",
      request: { method: "elicitation/create", params: expect.objectContaining({ message: "How deep should the research on owls go?" }) },
    });
    expect(await started.link.answer("depth", { result: { action: "accept", content: { depth: "deep" } } })).toBe(true);
    expect(await started.link.answer("depth", { result: { action: "accept", content: { depth: "again" } } })).toBe(false);
    expect(await result).toEqual({
      jsonrpc: "2.0",
      id: "front-7",
      result: { content: [{ type: "text", text: "Research on owls (depth: deep)" }], isError: false },
    });
    expect(seen.states.map((s) => s.status)).toEqual(expect.arrayContaining(["working", "input_required", "completed"]));
    // Asked once, however many polls saw it.
    expect(seen.questions).toHaveLength(1);
  });

  it("is followed by another replica's connection from the stored ref alone", async () => {
    const first = new ExtensionTasks(await connect(), true);
    const started = await first.start(CLIENT, call("research", { topic: "bats", seconds: 0.1 }), { ttlMs: 60_000 }, recorder().events);
    if (!("task" in started)) throw new Error("expected a task");
    started.link.close();
    const seen = recorder();
    const link = new ExtensionTasks(await connect(), true).attach(CLIENT, started.task, seen.events);
    const result = link.result();
    await waitFor(() => seen.questions[0], { what: "the question, seen from the other connection" });
    await link.answer("depth", { result: { action: "decline" } });
    expect(await result).toMatchObject({ result: { content: [{ text: "Research on bats (depth: none (declined))" }] } });
  });

  it("passes an answer given at once through, and reads an unknown task as gone", async () => {
    const c = await connect();
    const tasks = new ExtensionTasks(c, true);
    expect(await tasks.start(CLIENT, call("echo", { text: "inline" }), { ttlMs: 60_000 }, recorder().events)).toEqual({
      response: { jsonrpc: "2.0", id: "front-7", result: { content: [{ type: "text", text: "inline" }], _meta: expect.any(Object) } },
    });
    expect(await tasks.attach(CLIENT, { taskId: "0".repeat(32) }, recorder().events).get()).toBeUndefined();
    // Without the extension declared the server cannot run it: what a plain relay would get.
    const plain = await c.request({ method: "tools/call", params: { name: "research", arguments: { topic: "x" } } });
    expect(plain).toMatchObject({ error: { code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } } });
  });

  it("forwards a cancel as tasks/cancel and ends with the upstream's cancelled status", async () => {
    const tasks = new ExtensionTasks(await connect(), true);
    const seen = recorder();
    const started = await tasks.start(CLIENT, call("research", { topic: "moths" }), { ttlMs: 60_000 }, seen.events);
    if (!("task" in started)) throw new Error("expected a task");
    const result = started.link.result();
    await waitFor(() => seen.questions[0], { what: "the question" });
    await started.link.cancel();
    expect(await result).toMatchObject({ error: { data: { status: "cancelled" } } });
    expect(upstream.output()).toContain(`task ${started.task.taskId} cancelled`);
    // The question went with the task.
    expect(seen.taken).toEqual(["depth"]);
  });
});

/** The research tasks the demo logged, in order (its own ids: the upstream's side of the bridge). */
const upstreamTasks = (demo: RunningProcess, what: "started" | "completed" | "cancelled") =>
  [...demo.output().matchAll(new RegExp(`task (\\S+) ${what}`, "g"))].map((m) => m[1]!);

async function frontTask(url: string, taskId: string, status: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      if (["completed", "failed", "cancelled"].includes(task?.status) && task.status !== status)
        throw new Error(`task ended ${task.status}: ${JSON.stringify(task)}`);
      return task?.status === status ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what: `front task ${taskId} to be ${status}` },
  );
}

describe("taskgate bridges a 2026-07-28 upstream's own tasks (io.modelcontextprotocol/tasks) to the front task", () => {
  let upstream: RunningProcess & { mcpUrl: string };
  let gw: GatewayProcess;
  // research is a task from the start for a tasks-extension caller (required), so the upstream's question waits in the front task.
  beforeAll(async () => {
    upstream = await startDemoHttp(["--modern", "--tasks-extension"]);
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    gw = await startGateway({
      store,
      tasks: { detachAfterMs: 300, pollIntervalMs: 100 },
      upstreams: [{ name: "ext", path: "/mcp", http: { url: upstream.mcpUrl }, tools: { research: { taskSupport: "required" } } }],
    });
  });
  afterAll(async () => Promise.all([gw?.stop(), upstream?.stop()]));

  it("follows the upstream's task for a tasks-extension caller: its question in inputRequests, tasks/update, its result", async () => {
    const before = upstreamTasks(upstream, "started");
    const created = (
      await modern(
        gw.mcpUrl,
        "tools/call",
        { name: "research", arguments: { topic: "owls", seconds: 0.1 } },
        { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } },
      )
    ).body.result;
    expect(created.resultType).toBe("task");
    const waiting = await frontTask(gw.mcpUrl, created.taskId, "input_required");
    // One task upstream, and the front task is taskgate's own (its id is not the upstream's).
    const started = upstreamTasks(upstream, "started").filter((id) => !before.includes(id));
    expect(started).toHaveLength(1);
    expect(created.taskId).not.toBe(started[0]);
    const [key, asked] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(asked).toMatchObject({ method: "elicitation/create", params: { message: "How deep should the research on owls go?" } });
    await modern(
      gw.mcpUrl,
      "tasks/update",
      { taskId: created.taskId, inputResponses: { [key]: { action: "accept", content: { depth: "deep" } } } },
      { capabilities: WITH_TASKS },
    );
    const done = await frontTask(gw.mcpUrl, created.taskId, "completed");
    expect(done.result).toMatchObject({ content: [{ type: "text", text: "Research on owls (depth: deep)" }], isError: false });
    expect(upstreamTasks(upstream, "completed")).toContain(started[0]);
  });

  it("follows it for a 2025-11-25 caller (SDK callToolStream), its question on the related-task stream", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, { elicit: (message) => (asked.push(message), { action: "accept", content: { depth: "shallow" } }) });
    const seen: Array<{ type: string; result?: unknown }> = [];
    for await (const event of client.experimental.tasks.callToolStream({ name: "research", arguments: { topic: "bats", seconds: 0.1 } }, CallToolResultSchema, {
      task: {},
    }))
      seen.push(event);
    expect(asked).toEqual(["How deep should the research on bats go?"]);
    expect(textOf(seen.at(-1)?.result)).toBe("Research on bats (depth: shallow)");
    await client.close();
  });

  it("turns the front tasks/cancel into the upstream's tasks/cancel", async () => {
    const before = upstreamTasks(upstream, "started");
    const created = (
      await modern(gw.mcpUrl, "tools/call", { name: "research", arguments: { topic: "moths" } }, { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } })
    ).body.result;
    await frontTask(gw.mcpUrl, created.taskId, "input_required");
    const upstreamId = upstreamTasks(upstream, "started").find((id) => !before.includes(id))!;
    await modern(gw.mcpUrl, "tasks/cancel", { taskId: created.taskId }, { capabilities: WITH_TASKS });
    await waitFor(() => upstreamTasks(upstream, "cancelled").includes(upstreamId), { what: "the upstream's task to be cancelled" });
    await frontTask(gw.mcpUrl, created.taskId, "cancelled");
  });
});

describe("a replica that dies while it follows a 2026-07-28 upstream's own task", () => {
  let upstream: RunningProcess & { mcpUrl: string };
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    upstream = await startDemoHttp(["--modern", "--tasks-extension"]);
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = {
      store,
      tasks: FAST_TASKS,
      upstreams: [{ name: "ext", path: "/mcp", http: { url: upstream.mcpUrl }, tools: { research: { taskSupport: "required" } } }],
    };
    gateways = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => Promise.all([...gateways.map((g) => g.stop("SIGKILL")), upstream?.stop()]));

  it("is followed to its end by another replica from the stored upstream task id: the upstream's result, the tool run once", async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const before = upstreamTasks(upstream, "started");
    const created = (
      await modern(
        a.mcpUrl,
        "tools/call",
        { name: "research", arguments: { topic: "newts", seconds: 4 } },
        { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } },
      )
    ).body.result;
    const waiting = await frontTask(a.mcpUrl, created.taskId, "input_required");
    const key = Object.keys(waiting.inputRequests)[0]!;
    await modern(
      a.mcpUrl,
      "tasks/update",
      { taskId: created.taskId, inputResponses: { [key]: { action: "accept", content: { depth: "wide" } } } },
      { capabilities: WITH_TASKS },
    );
    // Killed while the upstream works on the answer (its statusMessage reached the front task).
    await until([a.mcpUrl], created.taskId, (t) => t.statusMessage === "Writing it up", 10_000, "the upstream's statusMessage");
    await a.stop("SIGKILL");
    const done = await until(
      [b.mcpUrl],
      created.taskId,
      (t) => ["completed", "failed", "cancelled"].includes(t.status),
      FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 15_000,
      "an end on b",
    );
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Research on newts (depth: wide)" }] } });
    expect(upstreamTasks(upstream, "started").filter((id) => !before.includes(id))).toHaveLength(1);
  });
});
