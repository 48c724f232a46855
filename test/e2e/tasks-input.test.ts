import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, EVERYTHING, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { TERMINAL, untilStatus } from "../helpers/until.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };

/** Poll until the task is `status` (a terminal status other than it fails at once); `check` may demand more. */
const until = (url: string, taskId: string, status: string, check?: (task: any) => boolean) => untilStatus(url, taskId, status, check ? { check } : {});

async function update(url: string, taskId: string, inputResponses: Record<string, unknown>) {
  return (await modern(url, "tasks/update", { taskId, inputResponses }, { capabilities: WITH_TASKS })).body;
}

// Each tool that asks is `required` here, so the call is a task from the start and its questions
// reach the client through inputRequests (MRTR before detaching is tasks-mrtr.test.ts).
describe("mid-call input without a held connection (the tasks extension)", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const required = (...names: string[]) => Object.fromEntries(names.map((n) => [n, { taskSupport: "required" }]));
    const upstreams = [
      { name: "demo", path: "/mcp", stdio: demoStdio(), tools: required("deploy") },
      {
        name: "fixture",
        path: "/fixture",
        stdio: { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] },
        tools: required("ask_two"),
      },
      {
        name: "everything",
        path: "/everything",
        stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] },
        tools: required("trigger-elicitation-request", "trigger-sampling-request", "trigger-url-elicitation", "get-roots-list"),
      },
    ];
    const config = (tasks: Record<string, unknown>) => ({ store, tasks: { detachAfterMs: 2000, ...tasks }, upstreams });
    [a, b] = await Promise.all([startGateway(config({})), startGateway(config({ inputTimeoutMs: 600 }))]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("turns the demo deploy's confirmation into input_required, answered with tasks/update on another process", async () => {
    const created = await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "billing", seconds: 0.1 } }, { capabilities: ELICIT });
    const task = created.body.result;
    expect(task.resultType).toBe("task");
    const waiting = await until(a.mcpUrl, task.taskId, "input_required");
    const keys = Object.keys(waiting.inputRequests);
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    expect(waiting.inputRequests[key]).toMatchObject({
      method: "elicitation/create",
      params: { message: expect.stringContaining("billing"), requestedSchema: { type: "object" } },
    });
    expect(waiting).not.toHaveProperty("requestState");
    // The same pending request is repeated on every poll, from any process.
    expect((await getTask(b.mcpUrl, task.taskId)).body.result.inputRequests).toEqual(waiting.inputRequests);

    const answers = { [key]: { action: "accept", content: { confirm: true } }, unknown: { action: "decline" } };
    expect(await update(b.mcpUrl, task.taskId, answers)).toMatchObject({ result: { resultType: "complete" } });
    const done = await until(a.mcpUrl, task.taskId, "completed");
    expect(done.result.content[0].text).toContain("Deployed billing");
    // A repeated tasks/update is the same empty ack and changes nothing.
    expect(await update(a.mcpUrl, task.taskId, answers)).toMatchObject({ result: { resultType: "complete" } });
    expect((await getTask(b.mcpUrl, task.taskId)).body.result).toEqual(done);
  });

  it("keeps a two-question task input_required with the rest after a partial answer, then completes", async () => {
    const url = `${a.url}/fixture`;
    const task = (await modern(url, "tools/call", { name: "ask_two", arguments: { first: "Colour?", second: "Size?" } }, { capabilities: ELICIT })).body.result;
    const both = await until(url, task.taskId, "input_required", (t) => Object.keys(t.inputRequests).length === 2);
    const byMessage = Object.fromEntries(Object.entries(both.inputRequests).map(([k, r]: [string, any]) => [r.params.message, k]));
    const [colour, size] = [byMessage["Colour?"]!, byMessage["Size?"]!];
    expect(colour).not.toBe(size);

    await update(`${b.url}/fixture`, task.taskId, { [colour]: { action: "accept", content: { answer: "green" } } });
    const rest = await until(url, task.taskId, "input_required", (t) => !(colour in t.inputRequests));
    expect(Object.keys(rest.inputRequests)).toEqual([size]);
    // The answered key is no longer outstanding: answering it again is ignored.
    await update(`${b.url}/fixture`, task.taskId, { [colour]: { action: "accept", content: { answer: "red" } } });
    await update(`${b.url}/fixture`, task.taskId, { [size]: { action: "accept", content: { answer: "large" } } });
    const done = await until(url, task.taskId, "completed");
    expect(done.result.content[0].text).toBe("green + large");
  });

  it("answers server-everything's sampling request through the task", async () => {
    const url = `${a.url}/everything`;
    const args = { name: "trigger-sampling-request", arguments: { prompt: "say hi", maxTokens: 10 } };
    const task = (await modern(url, "tools/call", args, { capabilities: { ...WITH_TASKS, sampling: {} } })).body.result;
    const waiting = await until(url, task.taskId, "input_required");
    const [key, request] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: "sampling/createMessage", params: { maxTokens: 10, messages: [{ role: "user" }] } });
    const sampled = { role: "assistant", content: { type: "text", text: "hi there" }, model: "gateway-test-model", stopReason: "endTurn" };
    await update(`${b.url}/everything`, task.taskId, { [key]: sampled });
    const done = await until(url, task.taskId, "completed");
    expect(done.result.content[0].text).toContain("gateway-test-model");
  });

  it("answers server-everything's elicitation tool the same way", async () => {
    // Owned by a, answered on b: b itself gives a question only 600 ms (the inputTimeoutMs test).
    const url = `${a.url}/everything`;
    const task = (await modern(url, "tools/call", { name: "trigger-elicitation-request", arguments: {} }, { capabilities: ELICIT })).body.result;
    const waiting = await until(url, task.taskId, "input_required");
    const [key, request] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: "elicitation/create", params: { requestedSchema: { required: ["name"] } } });
    await update(`${b.url}/everything`, task.taskId, { [key]: { action: "accept", content: { name: "Ada Lovelace", check: true } } });
    const done = await until(url, task.taskId, "completed");
    expect(done.result.content.map((c: any) => c.text).join("\n")).toContain("- Name: Ada Lovelace");
  });

  it("lists a url-mode elicitation for a client that declared url mode, and passes its answer on", async () => {
    const url = `${a.url}/everything`;
    const args = { name: "trigger-url-elicitation", arguments: { url: "https://auth.example/consent", message: "Sign in first" } };
    const task = (await modern(url, "tools/call", args, { capabilities: { ...WITH_TASKS, elicitation: { form: {}, url: {} } } })).body.result;
    const waiting = await until(url, task.taskId, "input_required");
    const [key, request] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: "elicitation/create", params: { mode: "url", url: "https://auth.example/consent", message: "Sign in first" } });
    await update(`${b.url}/everything`, task.taskId, { [key]: { action: "accept" } });
    const done = await until(url, task.taskId, "completed");
    expect(done.result.content[0].text).toContain("User completed the URL elicitation flow");
  });

  it("lists the upstream's roots/list for a client that declared roots, and passes the roots on", async () => {
    // Owned by a: b answers questions nobody took up within 600 ms, which would race the update.
    const url = `${a.url}/everything`;
    const task = (await modern(url, "tools/call", { name: "get-roots-list", arguments: {} }, { capabilities: { ...WITH_TASKS, roots: {} } })).body.result;
    const waiting = await until(url, task.taskId, "input_required");
    const [key, request] = Object.entries(waiting.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: "roots/list" });
    await update(`${b.url}/everything`, task.taskId, { [key]: { roots: [{ uri: "file:///srv/project", name: "project" }] } });
    const done = await until(url, task.taskId, "completed");
    expect(done.result.content.map((c: any) => c.text).join("\n")).toContain("file:///srv/project");
  });

  it("never lists a request the client did not declare a capability for: the upstream gets an error", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "x" } }, { capabilities: WITH_TASKS })).body.result;
    const seen: string[] = [];
    const ended = await waitFor(
      async () => {
        const t = (await getTask(a.mcpUrl, task.taskId)).body.result;
        seen.push(t.status);
        return TERMINAL.includes(t.status) ? t : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, what: "the task to end" },
    );
    expect(seen).not.toContain("input_required");
    expect(JSON.stringify(ended)).toContain("did not declare the elicitation capability");
  });

  it("fails the task with a message naming tasks.inputTimeoutMs when nobody answers in time", async () => {
    const task = (await modern(b.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "late" } }, { capabilities: ELICIT })).body.result;
    // Only the end is awaited: the 600 ms of input_required may pass between two polls of a loaded machine.
    const failed = await until(b.mcpUrl, task.taskId, "failed");
    expect(failed.error.message).toContain("tasks.inputTimeoutMs (600 ms)");
    expect(failed.statusMessage).toContain("tasks.inputTimeoutMs");
  });
});
