import { randomBytes } from "node:crypto";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { openSession, post } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

type Stream = AsyncGenerator<{ type: string; task?: { taskId: string }; result?: unknown; error?: unknown }>;

async function drain(stream: Stream) {
  const seen: Array<{ type: string; task?: { taskId: string }; result?: unknown; error?: unknown }> = [];
  for await (const message of stream) seen.push(message);
  return seen;
}

describe("the 2025-11-25 tasks (experimental), with the SDK 1.x client", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = {
      store,
      tasks: { cancelGraceMs: 200, pollIntervalMs: 100, defaultTtlMs: 60_000, maxTtlMs: 120_000 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { deploy: { taskSupport: "required" }, fail: { taskSupport: "forbidden" } } }],
    };
    [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("declares the tasks capability and each tool's taskSupport from taskgate's policy", async () => {
    const { client } = await connectClient(a.mcpUrl);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({ deploy: "required", fail: "forbidden", sleep: "optional", echo: "optional" });
    await client.close();
  });

  it("gives a 2025-11-25 session that declares the extension no task of the tasks extension", async () => {
    const sessionId = await openSession(a.mcpUrl, { extensions: { "io.modelcontextprotocol/tasks": {} } }, "2025-11-25");
    // deploy is `required`: a tasks-extension client would get a task at once; this session gets the 2025-11-25 tasks' -32601.
    const res = await post(
      a.mcpUrl,
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "deploy", arguments: { service: "x" } } },
      { "mcp-session-id": sessionId },
    );
    const body = (await res.json()) as { result?: unknown; error?: { code: number } };
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32601);
  });

  it("gives older protocol versions no task capability", async () => {
    const res = await post(a.mcpUrl, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old", version: "1" } },
    });
    const body = (await res.json()) as { result: { capabilities: Record<string, unknown> } };
    expect(body.result.capabilities).not.toHaveProperty("tasks");
  });

  it("runs a task-augmented call: CreateTaskResult at once, then the upstream's result from tasks/result", async () => {
    const { client } = await connectClient(a.mcpUrl);
    const seen = await drain(
      client.experimental.tasks.callToolStream({ name: "sleep", arguments: { seconds: 0.3 } }, CallToolResultSchema, { task: { ttl: 60_000 } }) as Stream,
    );
    expect(seen[0]?.type).toBe("taskCreated");
    const last = seen[seen.length - 1]!;
    expect(last.type).toBe("result");
    expect(textOf(last.result)).toMatch(/Slept/);
    const task = await client.experimental.tasks.getTask(seen[0]!.task!.taskId);
    expect(task).toMatchObject({ status: "completed", ttl: 60_000, pollInterval: 100 });
    expect(typeof task.createdAt).toBe("string");
    expect(typeof task.lastUpdatedAt).toBe("string");
    await client.close();
  });

  it("clamps a requested ttl to maxTtlMs and reports the real one", async () => {
    const { client } = await connectClient(a.mcpUrl);
    const seen = await drain(
      client.experimental.tasks.callToolStream({ name: "echo", arguments: { text: "x" } }, CallToolResultSchema, { task: { ttl: 999_999_999 } }) as Stream,
    );
    const task = await client.experimental.tasks.getTask(seen[0]!.task!.taskId);
    expect(task.ttl).toBe(120_000);
    await client.close();
  });

  it("answers a required tool called without a task, and a forbidden one called with one, with -32601", async () => {
    const { client } = await connectClient(a.mcpUrl);
    const plain = await client
      .request({ method: "tools/call", params: { name: "deploy", arguments: { service: "x" } } }, CallToolResultSchema)
      .catch((e: { code?: number }) => e);
    expect((plain as { code?: number }).code).toBe(-32601);
    const augmented = await client
      .request({ method: "tools/call", params: { name: "fail", arguments: {}, task: { ttl: 1000 } } }, CallToolResultSchema)
      .catch((e: { code?: number }) => e);
    expect((augmented as { code?: number }).code).toBe(-32601);
    await client.close();
  });

  it("delivers the upstream's elicitation through tasks/result and routes the answer back", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(a.mcpUrl, { elicit: (message) => (asked.push(message), { action: "accept", content: { confirm: true } }) });
    const seen = await drain(
      client.experimental.tasks.callToolStream({ name: "deploy", arguments: { service: "api", seconds: 0.1 } }, CallToolResultSchema, { task: {} }) as Stream,
    );
    expect(asked).toEqual([expect.stringContaining("api")]);
    expect(textOf(seen[seen.length - 1]!.result)).toContain("Deployed api");
    await client.close();
  });

  it("serves tasks/result on another replica, woken by the bus", async () => {
    const first = await connectClient(a.mcpUrl);
    const seen = first.client.experimental.tasks.callToolStream({ name: "sleep", arguments: { seconds: 0.5 } }, CallToolResultSchema, { task: {} }) as Stream;
    const created = (await seen.next()).value!;
    const second = await connectClient(b.mcpUrl, { sessionId: first.transport.sessionId! });
    const result = await second.client.experimental.tasks.getTaskResult(created.task!.taskId, CallToolResultSchema);
    expect(textOf(result)).toMatch(/Slept/);
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: created.task!.taskId });
    await seen.return(undefined);
    await first.client.close();
  });

  it("lists only the caller's own tasks, newest first, with cursor pagination", async () => {
    const mine = await connectClient(a.mcpUrl);
    const other = await connectClient(a.mcpUrl);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const seen = await drain(
        mine.client.experimental.tasks.callToolStream({ name: "echo", arguments: { text: `${i}` } }, CallToolResultSchema, { task: {} }) as Stream,
      );
      ids.push(seen[0]!.task!.taskId);
    }
    const listed = (await mine.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(listed.slice(0, 3)).toEqual([...ids].reverse());
    expect((await other.client.experimental.tasks.listTasks()).tasks).toEqual([]);
    await expect(other.client.experimental.tasks.getTask(ids[0]!)).rejects.toMatchObject({ code: -32602 });
    await mine.client.close();
    await other.client.close();
  });

  it("cancels synchronously: cancelled before the answer, and -32602 for a terminal task", async () => {
    const { client } = await connectClient(a.mcpUrl);
    const stream = client.experimental.tasks.callToolStream({ name: "hang", arguments: {} }, CallToolResultSchema, { task: {} }) as Stream;
    const created = (await stream.next()).value!;
    const cancelled = await client.experimental.tasks.cancelTask(created.task!.taskId);
    expect(cancelled.status).toBe("cancelled");
    await expect(client.experimental.tasks.cancelTask(created.task!.taskId)).rejects.toMatchObject({ code: -32602 });
    expect((await waitFor(() => client.experimental.tasks.getTask(created.task!.taskId))).status).toBe("cancelled");
    await stream.return(undefined);
    await client.close();
  });
});

describe("notifications/tasks/status on the session's GET stream", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = { store, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] };
    [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("sends every status change, also of a task another replica owns", async () => {
    const sessionId = await openSession(a.mcpUrl, {}, "2025-11-25");
    const abort = new AbortController();
    const get = await fetch(a.mcpUrl, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      signal: abort.signal,
    });
    expect(get.status).toBe(200);
    const statuses: string[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of get.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (const line of buffer.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const message = JSON.parse(line.slice(6));
          if (message.method === "notifications/tasks/status") statuses.push(message.params.status);
        }
        buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
      }
    })().catch(() => undefined);
    // Created through the other replica, in the same session.
    const res = await post(
      b.mcpUrl,
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "sleep", arguments: { seconds: 0.3 }, task: {} } },
      {
        "mcp-session-id": sessionId,
      },
    );
    expect(((await res.json()) as { result: { task: { status: string } } }).result.task.status).toBe("working");
    await waitFor(() => statuses.includes("completed"), { timeoutMs: 10_000, what: "a completed status notification" });
    expect(statuses[0]).toBe("working");
    abort.abort();
    await reading;
  });
});
