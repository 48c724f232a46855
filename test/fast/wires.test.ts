import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoUpstream, inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { MODERN, WITH_TASKS } from "../helpers/modern.js";
import { messagesOf } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

const LEGACY = "2025-11-25";
const TOOLS = { deploy: { taskSupport: "required" }, fail: { taskSupport: "forbidden" }, hang: { taskSupport: "required" } };

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await inProcessGateway({ tasks: { cancelGraceMs: 50 }, upstreams: [demoUpstream({ tools: TOOLS })] });
});
afterAll(async () => gw?.close());

describe("the 2025-11-25 wire: sessions and the 2025-11-25 tasks (in process)", () => {
  let session: string;
  let id = 100;
  const rpc = async (method: string, params: Record<string, unknown>) => {
    const res = await gw.post({ jsonrpc: "2.0", id: ++id, method, params }, { "mcp-session-id": session, "mcp-protocol-version": LEGACY });
    return (await messagesOf(res)).find((m) => "result" in m || "error" in m);
  };
  beforeAll(async () => {
    session = await gw.openSession();
  });

  it("runs a task-augmented call: CreateTaskResult at once, the result from tasks/result, listed for its session", async () => {
    const created = (await rpc("tools/call", { name: "echo", arguments: { text: "hello" }, task: { ttl: 60_000 } })).result;
    expect(created.task).toMatchObject({ taskId: expect.any(String), status: "working", ttl: 60_000 });
    const { taskId } = created.task;
    const result = await rpc("tasks/result", { taskId });
    expect(result.result.content[0].text).toContain("hello");
    expect((await rpc("tasks/get", { taskId })).result).toMatchObject({ taskId, status: "completed" });
    expect((await rpc("tasks/list", {})).result.tasks.map((t: any) => t.taskId)).toContain(taskId);
  });

  it("answers an unknown task with -32602, and cancelling a terminal task with -32602", async () => {
    expect((await rpc("tasks/get", { taskId: "01JUNKNOWN" })).error).toMatchObject({ code: -32602, message: "Failed to retrieve task: Task not found" });
    expect((await rpc("tasks/result", { taskId: "01JUNKNOWN" })).error).toMatchObject({ code: -32602 });
    const { taskId } = (await rpc("tools/call", { name: "echo", arguments: { text: "x" }, task: {} })).result.task;
    await rpc("tasks/result", { taskId });
    expect((await rpc("tasks/cancel", { taskId })).error).toMatchObject({ code: -32602 });
  });

  it("refuses a required tool called without a task, and a forbidden one called as a task, with -32601", async () => {
    expect((await rpc("tools/call", { name: "deploy", arguments: { service: "x" } })).error).toMatchObject({ code: -32601 });
    expect((await rpc("tools/call", { name: "fail", arguments: {}, task: {} })).error).toMatchObject({ code: -32601 });
  });

  it("cancels a running task before answering, and its tasks/result says it was cancelled", async () => {
    const { taskId } = (await rpc("tools/call", { name: "hang", arguments: {}, task: {} })).result.task;
    expect((await rpc("tasks/cancel", { taskId })).result).toMatchObject({ taskId, status: "cancelled" });
    expect((await rpc("tasks/result", { taskId })).error).toMatchObject({ code: -32603, data: { taskId, status: "cancelled" } });
  });
});

describe("the 2026-07-28 wire: stateless, the tasks extension (in process)", () => {
  it("answers server/discover, and a quick call inline with resultType complete", async () => {
    const discovered = await gw.modern("server/discover");
    expect(discovered.body.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [MODERN],
      capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
    const inline = await gw.modern("tools/call", { name: "echo", arguments: { text: "quick" } }, { capabilities: WITH_TASKS });
    expect(inline.body.result).toMatchObject({ resultType: "complete", content: [{ text: expect.stringContaining("quick") }] });
  });

  it("makes a task at once for a required tool, and ends it cancelled on tasks/cancel", async () => {
    const task = (await gw.modern("tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    expect(task).toMatchObject({ resultType: "task", status: "working" });
    const ack = await gw.modern("tasks/cancel", { taskId: task.taskId }, { capabilities: WITH_TASKS });
    expect(ack.body.result).toEqual({ resultType: "complete" });
    const ended = await waitFor(
      async () => {
        const t = (await gw.modern("tasks/get", { taskId: task.taskId }, { capabilities: WITH_TASKS })).body.result;
        return t.status === "working" ? undefined : t;
      },
      { what: "the task to end" },
    );
    expect(ended.status).toBe("cancelled");
  });

  it("refuses a required tool to a client without the extension (400, -32021), and tasks/* too", async () => {
    const res = await gw.modern("tools/call", { name: "hang", arguments: {} });
    expect([res.status, res.body.error.code]).toEqual([400, -32021]);
    expect(res.body.error.data).toEqual({ requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } });
    const get = await gw.modern("tasks/get", { taskId: "x" });
    expect([get.status, get.body.error.code]).toEqual([400, -32021]);
  });

  it("answers header mismatch (-32020), an unsupported version (-32022) and a missing _meta (-32602) with 400", async () => {
    const mismatch = await gw.modern("tools/call", { name: "echo", arguments: { text: "x" } }, { headers: { "mcp-name": "other" } });
    expect([mismatch.status, mismatch.body.error.code]).toEqual([400, -32020]);
    const meta = { "io.modelcontextprotocol/protocolVersion": "v999.0.0" };
    const unsupported = await gw.modern("server/discover", {}, { meta, headers: { "mcp-protocol-version": "v999.0.0" } });
    expect([unsupported.status, unsupported.body.error.code]).toEqual([400, -32022]);
    const bare = await gw.post({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as any).error.code).toBe(-32602);
  });

  it("has no tasks/result, tasks/list, sessions or GET stream; an unknown task is -32602", async () => {
    for (const method of ["tasks/result", "tasks/list"]) {
      const res = await gw.modern(method, { taskId: "x" }, { capabilities: WITH_TASKS });
      expect([res.status, res.body.error.code]).toEqual([404, -32601]);
    }
    const get = await gw.request("/mcp", { headers: { accept: "text/event-stream", "mcp-protocol-version": MODERN } });
    expect(get.status).toBe(405);
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const res = await gw.modern(method, { taskId: "01JUNKNOWN", inputResponses: {} }, { capabilities: WITH_TASKS });
      expect(res.body.error, method).toMatchObject({ code: -32602 });
    }
  });

  it("refuses an MRTR retry whose requestState is not one it signed, with -32602", async () => {
    const args = { name: "deploy", arguments: { service: "x" }, inputResponses: {}, requestState: "forged.state" };
    const res = await gw.modern("tools/call", args, { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } });
    expect(res.body.error).toMatchObject({ code: -32602 });
  });
});
