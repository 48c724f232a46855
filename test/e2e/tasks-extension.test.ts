import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { childPids, demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { untilEnded } from "../helpers/until.js";
import { waitFor } from "../helpers/wait-for.js";

const config = (store: Record<string, unknown>, tasks: Record<string, unknown> = {}) => ({
  store,
  tasks: { detachAfterMs: 300, cancelGraceMs: 300, pollIntervalMs: 500, ...tasks },
  upstreams: [
    {
      name: "demo",
      path: "/mcp",
      stdio: demoStdio(),
      // echo never detaches, however loaded the machine: the inline answer needs no race with a timer.
      tools: { fail: { taskSupport: "required" }, crash: { taskSupport: "required" }, hang: { taskSupport: "required" }, echo: { detachAfterMs: 60_000 } },
    },
  ],
});

const finished = (url: string, taskId: string) => untilEnded(url, taskId);

describe("tasks of the tasks extension on the 2026-07-28 wire, in front of the demo server over stdio", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    [a, b] = await Promise.all([startGateway(config(store)), startGateway(config(store, { defaultTtlMs: 1500 }))]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("answers a call that finishes under detachAfterMs inline, with resultType complete", async () => {
    const { body } = await modern(a.mcpUrl, "tools/call", { name: "echo", arguments: { text: "quick" } }, { capabilities: WITH_TASKS });
    expect(body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: expect.stringContaining("quick") }] });
  });

  it("turns a call that runs past detachAfterMs into a task stored before the handle is returned", async () => {
    const { body } = await modern(
      a.mcpUrl,
      "tools/call",
      { name: "sleep", arguments: { seconds: 1.2, progressIntervalMs: 100 } },
      { capabilities: WITH_TASKS },
    );
    const task = body.result;
    expect(task).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number), pollIntervalMs: 500 });
    expect(Number.isInteger(task.ttlMs)).toBe(true);
    expect(task).not.toHaveProperty("ttl");
    expect(new Date(task.createdAt).toISOString()).toBe(task.createdAt);
    // Readable at once, on the other replica too.
    expect((await getTask(b.mcpUrl, task.taskId)).body.result).toMatchObject({ resultType: "complete", taskId: task.taskId });
    const progressed = await waitFor(async () => (await getTask(a.mcpUrl, task.taskId)).body.result.statusMessage, { what: "a statusMessage from progress" });
    expect(progressed).toMatch(/\d/);
    const done = await finished(a.mcpUrl, task.taskId);
    expect(done).toMatchObject({ status: "completed", result: { resultType: "complete", content: [{ text: expect.stringMatching(/Slept/) }] } });
  });

  it("makes a task at once for a required tool; an isError result completes, a JSON-RPC error fails", async () => {
    const failing = (await modern(a.mcpUrl, "tools/call", { name: "fail", arguments: { message: "bad input" } }, { capabilities: WITH_TASKS })).body.result;
    expect(failing).toMatchObject({ resultType: "task", status: "working" });
    expect(await finished(a.mcpUrl, failing.taskId)).toMatchObject({ status: "completed", result: { isError: true } });

    const crashing = (await modern(a.mcpUrl, "tools/call", { name: "crash", arguments: { message: "kaboom" } }, { capabilities: WITH_TASKS })).body.result;
    const crashed = await finished(a.mcpUrl, crashing.taskId);
    expect(crashed).toMatchObject({ status: "failed", error: { code: -32000, message: expect.stringContaining("kaboom") }, statusMessage: expect.any(String) });
  });

  it("refuses a required tool to a client that did not declare the extension, with -32021", async () => {
    const res = await modern(a.mcpUrl, "tools/call", { name: "hang", arguments: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } });
  });

  it("never gives a task to a client that did not declare the extension, and ignores params.task", async () => {
    const res = await modern(a.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 0.6 }, task: { ttl: 60000 } });
    expect(res.body.result).toMatchObject({ resultType: "complete", content: [{ text: expect.stringMatching(/Slept/) }] });
    const declared = await modern(a.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" }, task: { ttl: 60000 } }, { capabilities: WITH_TASKS });
    expect(declared.body.result.resultType).toBe("complete");
  });

  it("cancels a call that never answers: empty ack, then cancelled; a repeated cancel is harmless", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    const ack = await modern(b.mcpUrl, "tasks/cancel", { taskId: task.taskId }, { capabilities: WITH_TASKS });
    expect(ack.body).toMatchObject({ result: { resultType: "complete" } });
    expect(Object.keys(ack.body.result)).toEqual(["resultType"]);
    expect((await finished(a.mcpUrl, task.taskId)).status).toBe("cancelled");
    expect((await modern(a.mcpUrl, "tasks/cancel", { taskId: task.taskId }, { capabilities: WITH_TASKS })).body.result).toEqual({ resultType: "complete" });
  });

  it("fails a detached call clearly when the upstream process dies", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 30, progressIntervalMs: 100 } }, { capabilities: WITH_TASKS }))
      .body.result;
    await waitFor(async () => (await getTask(a.mcpUrl, task.taskId)).body.result.statusMessage, { what: "the call to be running" });
    for (const pid of childPids(a.proc.pid!)) process.kill(pid, "SIGKILL");
    const failed = await finished(a.mcpUrl, task.taskId);
    expect(failed).toMatchObject({ status: "failed", error: { code: -32603, message: expect.stringMatching(/exited/) } });
    expect(failed.statusMessage).toMatch(/exited/);
  });

  it("answers an unknown task, and an expired one, with the same -32602", async () => {
    const unknown = await getTask(a.mcpUrl, "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx");
    expect(unknown.body.error).toMatchObject({ code: -32602, message: "Failed to retrieve task: Task not found" });
    // b creates tasks with a 1.5 s TTL.
    const short = (await modern(b.mcpUrl, "tools/call", { name: "fail", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    expect(short.ttlMs).toBe(1500);
    expect((await getTask(a.mcpUrl, short.taskId)).body.result.taskId).toBe(short.taskId);
    const gone = await waitFor(
      async () => ((await getTask(a.mcpUrl, short.taskId)).body.error ? (await getTask(a.mcpUrl, short.taskId)).body.error : undefined),
      {
        timeoutMs: 5000,
        intervalMs: 100,
        what: "the task to expire",
      },
    );
    expect(gone).toEqual(unknown.body.error);
  });

  it("requires the extension on every tasks/* request and has no tasks/result or tasks/list", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "fail", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    const undeclared = await modern(a.mcpUrl, "tasks/get", { taskId: task.taskId });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error.code).toBe(-32021);
    for (const method of ["tasks/result", "tasks/list"]) {
      const res = await modern(a.mcpUrl, method, { taskId: task.taskId }, { capabilities: WITH_TASKS });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe(-32601);
    }
  });

  it("acks tasks/update for an unknown key and refuses an unknown task", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "fail", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    const ack = await modern(a.mcpUrl, "tasks/update", { taskId: task.taskId, inputResponses: { nope: { action: "accept" } } }, { capabilities: WITH_TASKS });
    expect(ack.body.result).toEqual({ resultType: "complete" });
    const unknown = await modern(a.mcpUrl, "tasks/update", { taskId: "missing", inputResponses: {} }, { capabilities: WITH_TASKS });
    expect(unknown.body.error.code).toBe(-32602);
  });
});
