import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonRpcRequest } from "../../src/jsonrpc/message.js";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { ExtensionTasks, offersTasksExtension } from "../../src/upstream/native-tasks/tasks-extension.js";
import type { UpstreamQuestion, UpstreamTaskEvents, UpstreamTaskState } from "../../src/upstream/native-tasks/upstream-tasks.js";
import { httpConfig, testLogger } from "../fixtures/upstreams.js";
import { startDemoHttp, type RunningProcess } from "../helpers/processes.js";
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

const call = (name: string, args: Record<string, unknown>): JsonRpcRequest => ({ jsonrpc: "2.0", id: "front-7", method: "tools/call", params: { name, arguments: args } });

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
    expect(question).toEqual({ key: "depth", request: { method: "elicitation/create", params: expect.objectContaining({ message: "How deep should the research on owls go?" }) } });
    expect(await started.link.answer("depth", { result: { action: "accept", content: { depth: "deep" } } })).toBe(true);
    expect(await started.link.answer("depth", { result: { action: "accept", content: { depth: "again" } } })).toBe(false);
    expect(await result).toEqual({ jsonrpc: "2.0", id: "front-7", result: { content: [{ type: "text", text: "Research on owls (depth: deep)" }], isError: false } });
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
    expect(await tasks.start(CLIENT, call("echo", { text: "inline" }), { ttlMs: 60_000 }, recorder().events)).toEqual({ response: { jsonrpc: "2.0", id: "front-7", result: { content: [{ type: "text", text: "inline" }], _meta: expect.any(Object) } } });
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
