import { randomBytes } from "node:crypto";
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth, legacy, openSessionAs } from "../helpers/auth.js";
import { callWithExtTasks } from "../helpers/ext-tasks.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH, openSession, post } from "../helpers/raw.js";
import { openSse, type SseReader } from "../helpers/sse-reader.js";
import { waitFor } from "../helpers/wait-for.js";

const VERSION = "2025-11-25";
const RELATED_TASK = "io.modelcontextprotocol/related-task";
const TERMINAL = ["completed", "failed", "cancelled"];
const ELICIT = { elicitation: {} };
const isElicitation = (m: any) => m.method === "elicitation/create";
const isResponse = (m: any) => m.id !== undefined && !("method" in m);

function sessionHeaders(sessionId: string) {
  return { "mcp-session-id": sessionId, "mcp-protocol-version": VERSION };
}

function openGet(url: string, sessionId: string): Promise<SseReader> {
  return openSse(url, { headers: { accept: "text/event-stream", ...sessionHeaders(sessionId) } });
}

function openResult(url: string, sessionId: string, taskId: string, id: number): Promise<SseReader> {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tasks/result", params: { taskId } });
  return openSse(url, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...sessionHeaders(sessionId) }, body });
}

async function createTask(url: string, sessionId: string, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, task: {} } }, sessionHeaders(sessionId));
  const body = (await res.json()) as { result: { task: { taskId: string } } };
  return body.result.task.taskId;
}

async function getTask(url: string, sessionId: string, taskId: string): Promise<any> {
  const res = await post(url, { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId } }, sessionHeaders(sessionId));
  return ((await res.json()) as { result: any }).result;
}

async function answer(url: string, sessionId: string, id: string, result: Record<string, unknown>): Promise<number> {
  return (await post(url, { jsonrpc: "2.0", id, result }, sessionHeaders(sessionId))).status;
}

function untilEnded(url: string, sessionId: string, taskId: string) {
  return waitFor(
    async () => {
      const task = await getTask(url, sessionId, taskId);
      return TERMINAL.includes(task?.status) ? task : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: `task ${taskId} to end` },
  );
}

const CONFIRM = { action: "accept", content: { confirm: true } } as const;

// The memory store serves one process; Redis is what replicas share. Both run every case.
describe.each(["memory", "redis"] as const)("questions of the 2025-11-25 tasks reach every kind of client (%s store)", (kind) => {
  let gw: GatewayProcess;
  let short: GatewayProcess;
  beforeAll(async () => {
    const store = (prefix: string) =>
      kind === "redis" ? { store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}${prefix}:` } } : {};
    const upstreams = [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { deploy: { taskSupport: "required" } } }];
    // One after the other: two gateways and their upstreams starting at once are slow on a busy machine.
    gw = await startGateway({ ...store("a"), tasks: { pollIntervalMs: 100 }, upstreams });
    short = await startGateway({ ...store("b"), tasks: { pollIntervalMs: 100, inputTimeoutMs: 800, cancelGraceMs: 200 }, upstreams });
  });
  afterAll(async () => Promise.all([gw?.stop(), short?.stop()]));

  it("an @modelcontextprotocol/ext-tasks 0.2.x client, which polls to the end, completes an elicitation task", async () => {
    const run = await callWithExtTasks(gw.mcpUrl, "deploy", { service: "billing", seconds: 0.1 }, () => CONFIRM);
    expect(run.asked).toEqual([expect.stringContaining("billing")]);
    // The question carried the related-task _meta: the library tied it to its own task.
    expect(run.taskIds).toHaveLength(1);
    expect(run.relatedTaskIds).toEqual(run.taskIds);
    expect(textOf(run.result)).toContain("Deployed billing");
  });

  it("the SDK 1.x client completes one while holding only the GET stream and polling tasks/get", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, { elicit: (message) => (asked.push(message), CONFIRM) });
    const created = await client.request(
      { method: "tools/call", params: { name: "deploy", arguments: { service: "api", seconds: 0.1 }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const seen: string[] = [];
    const ended = await waitFor(
      async () => {
        const task = await client.experimental.tasks.getTask(taskId);
        seen.push(task.status);
        return TERMINAL.includes(task.status) ? task : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "the task to end" },
    );
    expect(ended.status).toBe("completed");
    expect(asked).toEqual([expect.stringContaining("api")]);
    // tasks/result only now, at the terminal status: the question came on the GET stream.
    expect(textOf(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toContain("Deployed api");
    await client.close();
  });

  it("re-delivers an unanswered question when tasks/result is opened again, and takes the answer", async () => {
    const sessionId = await openSession(gw.mcpUrl, ELICIT, VERSION);
    const taskId = await createTask(gw.mcpUrl, sessionId, "deploy", { service: "reopen", seconds: 0.1 });
    const first = await openResult(gw.mcpUrl, sessionId, taskId, 10);
    const asked = await first.next(isElicitation, "the question on the first tasks/result stream");
    expect(asked.params._meta[RELATED_TASK]).toEqual({ taskId });
    expect(asked.params.message).toContain("reopen");
    first.close();

    const second = await openResult(gw.mcpUrl, sessionId, taskId, 11);
    const again = await second.next(isElicitation, "the question again on the re-opened tasks/result stream");
    expect(again.id).toBe(asked.id);
    expect(again.params).toEqual(asked.params);
    expect(await answer(gw.mcpUrl, sessionId, again.id, CONFIRM)).toBe(202);
    const final = await second.next(isResponse, "the result on the re-opened stream");
    expect(final.id).toBe(11);
    expect(textOf(final.result)).toContain("Deployed reopen");
    expect(final.result._meta[RELATED_TASK]).toEqual({ taskId });
  });

  it("asks a client that reads both streams once, even when its user answers only after tasks/result is open", async () => {
    const asked: string[] = [];
    let resultOpened = false;
    const { client } = await connectClient(gw.mcpUrl, {
      onPost: (method) => void (method === "tasks/result" && (resultOpened = true)),
      // A person answering: only once the SDK's tasks/result, opened at input_required, is waiting too.
      elicit: async (message) => {
        asked.push(message);
        await waitFor(() => resultOpened, { what: "the SDK to open tasks/result" });
        return CONFIRM;
      },
    });
    const seen = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "deploy", arguments: { service: "slow", seconds: 0.1 } },
      CallToolResultSchema,
      { task: {} },
    ))
      seen.push(message);
    expect(textOf((seen[seen.length - 1] as { result?: unknown }).result)).toContain("Deployed slow");
    expect(asked).toEqual([expect.stringContaining("slow")]);
    await client.close();
  });

  it("sends a question again on tasks/result once the GET stream that carried it closed, under another id; the first answer wins", async () => {
    const sessionId = await openSession(gw.mcpUrl, ELICIT, VERSION);
    const get = await openGet(gw.mcpUrl, sessionId);
    expect(get.status).toBe(200);
    const taskId = await createTask(gw.mcpUrl, sessionId, "deploy", { service: "twice", seconds: 0.1 });
    const onGet = await get.next(isElicitation, "the question on the GET stream");
    expect(onGet.params._meta[RELATED_TASK]).toEqual({ taskId });
    get.close();
    const result = await openResult(gw.mcpUrl, sessionId, taskId, 20);
    const onResult = await result.next(isElicitation, "the question on the tasks/result stream");
    expect(onResult.id).not.toBe(onGet.id);
    expect(onResult.params).toEqual(onGet.params);

    // The GET copy is answered "deploy" first, then the tasks/result copy "do not": only the first counts.
    expect(await answer(gw.mcpUrl, sessionId, onGet.id, CONFIRM)).toBe(202);
    expect(await answer(gw.mcpUrl, sessionId, onResult.id, { action: "decline" })).toBe(202);
    const final = await result.next(isResponse, "the result");
    expect(textOf(final.result)).toBe("Deployed twice");
  });

  it("asks a client whose tasks/result takes only JSON on its GET stream, and answers that tasks/result at the end", async () => {
    const sessionId = await openSession(gw.mcpUrl, ELICIT, VERSION);
    const get = await openGet(gw.mcpUrl, sessionId);
    const taskId = await createTask(gw.mcpUrl, sessionId, "deploy", { service: "json", seconds: 0.1 });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 40, method: "tasks/result", params: { taskId } });
    const blocked = fetch(gw.mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...sessionHeaders(sessionId) },
      body,
    });
    const question = await get.next(isElicitation, "the question on the GET stream");
    expect(await answer(gw.mcpUrl, sessionId, question.id, CONFIRM)).toBe(202);
    const res = await blocked;
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(textOf(((await res.json()) as { result: unknown }).result)).toBe("Deployed json");
    get.close();
  });

  it("never sends a task's question to another session's GET stream", async () => {
    const [mine, other] = await Promise.all([openSession(gw.mcpUrl, ELICIT, VERSION), openSession(gw.mcpUrl, ELICIT, VERSION)]);
    const [myGet, otherGet] = await Promise.all([openGet(gw.mcpUrl, mine), openGet(gw.mcpUrl, other)]);
    const taskId = await createTask(gw.mcpUrl, mine, "deploy", { service: "private", seconds: 0.1 });
    const question = await myGet.next(isElicitation, "the question on the owner's GET stream");
    // The other session's stream is open and served (a task of its own reaches it) but never got the question.
    const itsOwn = await createTask(gw.mcpUrl, other, "echo", { text: "x" });
    await otherGet.next(
      (m) => m.method === "notifications/tasks/status" && m.params.taskId === itsOwn && m.params.status === "completed",
      "the other session's own task",
    );
    expect(JSON.stringify(otherGet.messages)).not.toContain(taskId);
    expect(await answer(gw.mcpUrl, mine, question.id, CONFIRM)).toBe(202);
    expect((await untilEnded(gw.mcpUrl, mine, taskId)).status).toBe("completed");
    myGet.close();
    otherGet.close();
  });

  it("fails a task nobody answers within tasks.inputTimeoutMs with a message naming it", async () => {
    const sessionId = await openSession(short.mcpUrl, ELICIT, VERSION);
    const get = await openGet(short.mcpUrl, sessionId);
    const taskId = await createTask(short.mcpUrl, sessionId, "deploy", { service: "late", seconds: 0.1 });
    await get.next(isElicitation, "the question nobody answers");
    const ended = await untilEnded(short.mcpUrl, sessionId, taskId);
    expect(ended.status).toBe("failed");
    expect(ended.statusMessage).toContain("tasks.inputTimeoutMs (800 ms)");
    const result = await openResult(short.mcpUrl, sessionId, taskId, 30);
    const final = await result.next(isResponse, "the failed task's result");
    expect(final.error.message).toContain("tasks.inputTimeoutMs");
    get.close();
  });

  it("sends each status change once to an SDK 1.x client holding the GET stream and tasks/result", async () => {
    const { client } = await connectClient(gw.mcpUrl, { elicit: () => CONFIRM });
    const notices: Array<{ taskId: string; status: string; statusMessage?: string; lastUpdatedAt: string }> = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void notices.push(n.params));
    const taskIds: string[] = [];
    for (const [name, args] of [
      ["sleep", { seconds: 0.3 }],
      ["deploy", { service: "once", seconds: 0.1 }],
    ] as const) {
      const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {} });
      let last: { type: string; task?: { taskId: string } } | undefined;
      for await (const message of stream) {
        if (message.type === "taskCreated") taskIds.push(message.task.taskId);
        last = message;
      }
      expect(last?.type).toBe("result");
    }
    // Both streams had their chance: the terminal status of each task has arrived.
    await waitFor(() => taskIds.every((id) => notices.some((n) => n.taskId === id && n.status === "completed")), { what: "both completed notifications" });
    const keys = notices.map((n) => `${n.taskId} ${n.status} ${n.statusMessage ?? ""} ${n.lastUpdatedAt}`);
    expect(keys).toEqual([...new Set(keys)]);
    for (const id of taskIds) expect(keys.filter((k) => k.startsWith(`${id} completed`))).toHaveLength(1);
    await client.close();
  });
});

describe("questions of the 2025-11-25 tasks with bearer auth: one principal, two sessions", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    gw = await startGateway({ store, auth: bearerAuth("alice"), upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
  });
  afterAll(async () => gw?.stop());

  it("asks only on the GET stream of the session that created the task, while both see its status", async () => {
    const alice = as("alice");
    const [mine, other] = await Promise.all([openSessionAs(gw.mcpUrl, alice, ELICIT), openSessionAs(gw.mcpUrl, alice, ELICIT)]);
    const getOf = (sessionId: string) => openSse(gw.mcpUrl, { headers: { accept: "text/event-stream", ...alice, ...sessionHeaders(sessionId) } });
    const [myGet, otherGet] = await Promise.all([getOf(mine), getOf(other)]);
    const res = await legacy(
      gw.mcpUrl,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "deploy", arguments: { service: "alice", seconds: 0.1 }, task: {} } },
      { ...alice, "mcp-session-id": mine },
    );
    const taskId = ((await res.json()) as { result: { task: { taskId: string } } }).result.task.taskId;
    const question = await myGet.next(isElicitation, "the question on the creating session's GET stream");
    expect((await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: question.id, result: CONFIRM }, { ...alice, "mcp-session-id": mine })).status).toBe(202);
    // The other session follows the task to its end (statuses are the principal's) and was never asked.
    const isStatus = (status: string) => (m: any) => m.method === "notifications/tasks/status" && m.params.taskId === taskId && m.params.status === status;
    await otherGet.next(isStatus("input_required"), "input_required on the other session's stream");
    await otherGet.next(isStatus("completed"), "completed on the other session's stream");
    expect(otherGet.messages.filter(isElicitation)).toEqual([]);
    myGet.close();
    otherGet.close();
  });
});
