import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const GATEWAY_TOOLS = ["taskgate_status", "taskgate_result", "taskgate_cancel", "taskgate_answer"];

const config = (store: Record<string, unknown>) => ({
  store,
  auth: bearerAuth("alice", "bob"),
  tasks: { detachAfterMs: 300, pollIntervalMs: 500, cancelGraceMs: 300, unawareClients: "handle" },
  upstreams: [
    // deploy: long enough a threshold that its question, not the clock, detaches it.
    {
      name: "demo",
      path: "/mcp",
      stdio: demoStdio(),
      tools: { hang: { taskSupport: "required" }, fail: { taskSupport: "forbidden" }, deploy: { detachAfterMs: 20_000 } },
    },
    // The default (block) on another path: nothing changes there.
    { name: "blocking", path: "/block", stdio: demoStdio(), unawareClients: "block", tools: { hang: { taskSupport: "required" } } },
    // A tool with an outputSchema, handled for this one tool only.
    {
      name: "everything",
      path: "/everything",
      stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] },
      unawareClients: "block",
      tools: { "get-structured-content": { taskSupport: "required", unawareClients: "handle" } },
    },
  ],
});

type Sdk = Awaited<ReturnType<typeof connectClient>>;
const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<any>;

/** Poll the result tool until it returns something other than "still running". */
async function resultOf(c: Client, taskId: string): Promise<any> {
  return waitFor(
    async () => {
      const r = await call(c, "taskgate_result", { taskId });
      return r.structuredContent?.taskId === taskId || /still running/.test(textOf(r)) ? undefined : r;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: `result of ${taskId}` },
  );
}

describe("task-unaware callers in handle mode (tasks.unawareClients: handle)", () => {
  let gw: GatewayProcess;
  let alice: Sdk;
  let bob: Sdk;
  beforeAll(async () => {
    gw = await startGateway(config({ redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` }));
    const sdk = (name: string) => connectClient(gw.mcpUrl, { headers: as(name) });
    [alice, bob] = await Promise.all([sdk("alice"), sdk("bob")]);
  });
  afterAll(async () => {
    await Promise.all([alice?.client.close(), bob?.client.close()]);
    await gw?.stop();
  });

  it("drops a handled tool's outputSchema for such callers only, and returns its structured result through the result tool", async () => {
    const everything = await connectClient(`${gw.url}/everything`, { headers: as("alice") });
    try {
      const listed = (await everything.client.listTools()).tools.find((t) => t.name === "get-structured-content");
      expect(listed).toBeDefined();
      expect(listed).not.toHaveProperty("outputSchema");
      const aware = await modern(`${gw.url}/everything`, "tools/list", {}, { headers: as("alice"), capabilities: WITH_TASKS });
      expect(aware.body.result.tools.find((t: any) => t.name === "get-structured-content").outputSchema).toMatchObject({ type: "object" });
      const { taskId } = ((await call(everything.client, "get-structured-content", { location: "Chicago" })) as any).structuredContent;
      const result = await resultOf(everything.client, taskId);
      expect(result.structuredContent).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
    } finally {
      await everything.client.close();
    }
  });

  it("answers every gateway tool with structuredContent its published outputSchema accepts, as the SDK client checks", async () => {
    const { tools } = await alice.client.listTools();
    // The validator the SDK client uses for tools/call.
    const validator = new AjvJsonSchemaValidator();
    const check = (name: string, value: unknown) => {
      const outcome = validator.getValidator(tools.find((t) => t.name === name)!.outputSchema as any)(value);
      expect(outcome.valid, outcome.errorMessage).toBe(true);
    };
    // The SDK client validates each answer against the listed outputSchema itself (it throws otherwise).
    const { taskId } = (await call(alice.client, "hang", {})).structuredContent;
    check("taskgate_status", (await call(alice.client, "taskgate_status", { taskId })).structuredContent);
    const refused = await call(alice.client, "taskgate_answer", { taskId, response: {} });
    expect(refused.isError).toBe(true);
    check("taskgate_answer", refused.structuredContent);
    check("taskgate_cancel", (await call(alice.client, "taskgate_cancel", { taskId })).structuredContent);
    const ended = await waitFor(async () => {
      const s = (await call(alice.client, "taskgate_status", { taskId })).structuredContent;
      return s.status === "cancelled" ? s : undefined;
    });
    check("taskgate_status", ended);
    expect(ended).toMatchObject({ message: expect.stringMatching(new RegExp(`^Task ${taskId} ended cancelled`)), next: [] });
  });

  it("lists the gateway tools with schemas and annotations", async () => {
    const { tools } = await alice.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of GATEWAY_TOOLS) expect(byName.get(name)?.inputSchema.required).toContain("taskId");
    expect(byName.get("taskgate_status")).toMatchObject({ annotations: { readOnlyHint: true }, outputSchema: { type: "object" } });
    expect(byName.get("taskgate_cancel")?.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get("taskgate_answer")?.inputSchema.required).toEqual(["taskId", "response"]);
    expect(byName.has("sleep")).toBe(true);
  });

  it("answers a quick call inline with the upstream's own result", async () => {
    expect(textOf(await call(alice.client, "echo", { text: "quick" }))).toBe("quick");
  });

  it("detaches a long call into a task, answered with an ordinary result, and follows it to the upstream's result", async () => {
    const detached = await call(alice.client, "sleep", { seconds: 3, progressIntervalMs: 200 });
    expect(detached.isError).not.toBe(true);
    const { taskId, followWith } = detached.structuredContent;
    expect(taskId).toEqual(expect.any(String));
    expect(followWith).toEqual({ status: "taskgate_status", result: "taskgate_result", cancel: "taskgate_cancel", answer: "taskgate_answer" });
    expect(textOf(detached)).toContain(taskId);
    expect(textOf(detached)).toContain("taskgate_status");
    // structuredContent alone is enough: what to call next, with its arguments, in words.
    expect(detached.structuredContent).toMatchObject({ status: "working", message: textOf(detached) });
    expect(detached.structuredContent.next).toEqual([
      { tool: "taskgate_status", arguments: { taskId }, purpose: expect.stringMatching(/progress/) },
      { tool: "taskgate_result", arguments: { taskId }, purpose: expect.stringMatching(/result/) },
      { tool: "taskgate_cancel", arguments: { taskId }, purpose: expect.stringMatching(/Stops/) },
    ]);
    const running = (await call(alice.client, "taskgate_status", { taskId })).structuredContent;
    expect(running.message).toMatch(new RegExp(`Task ${taskId} is still running.*taskgate_status`));
    expect(running.next.map((n: any) => [n.tool, n.arguments])).toEqual([
      ["taskgate_status", { taskId }],
      ["taskgate_result", { taskId }],
      ["taskgate_cancel", { taskId }],
    ]);
    const early = await call(alice.client, "taskgate_result", { taskId });
    expect(textOf(early)).toMatch(/still running, check again in \d+ s|Check again in \d+ s/i);
    const progress = await waitFor(async () => (await call(alice.client, "taskgate_status", { taskId })).structuredContent.statusMessage, { what: "progress" });
    expect(progress).toMatch(/^Slept/);
    const done = await resultOf(alice.client, taskId);
    expect(done).toMatchObject({ content: [{ type: "text", text: "Slept 3 s" }] });
    // Bound to its principal: another caller's lookup reads like an unknown task.
    const foreign = await call(bob.client, "taskgate_status", { taskId });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toContain("No task");
  });

  it("detaches at once when the upstream asks, shows the question, and routes the answer to it", async () => {
    const detached = await call(alice.client, "deploy", { service: "billing", seconds: 0.2 });
    const { taskId } = detached.structuredContent;
    expect(textOf(detached)).toContain("asks a question first");
    const waiting = await waitFor(async () => {
      const s = (await call(alice.client, "taskgate_status", { taskId })).structuredContent;
      return s.status === "input_required" ? s : undefined;
    });
    expect(waiting.questions).toEqual([
      expect.objectContaining({ method: "elicitation/create", params: expect.objectContaining({ message: "Deploy billing?" }) }),
    ]);
    // The answer call is spelled out, key and all, for a model that reads only structuredContent.
    expect(waiting.next[0]).toEqual({
      tool: "taskgate_answer",
      arguments: { taskId, key: waiting.questions[0].key, response: { action: "accept", content: {} } },
      purpose: expect.stringContaining("Deploy billing?"),
    });
    const answered = await call(alice.client, "taskgate_answer", { taskId, response: { confirm: true } });
    expect(answered.isError).not.toBe(true);
    expect(answered.structuredContent).toMatchObject({ taskId });
    expect(textOf(await resultOf(alice.client, taskId))).toBe("Deployed billing");
  });

  it("runs a required tool as a task at once and cancels it through the cancel tool", async () => {
    const detached = await call(alice.client, "hang", {});
    const { taskId } = detached.structuredContent;
    expect((await call(alice.client, "taskgate_cancel", { taskId })).structuredContent.taskId).toBe(taskId);
    await waitFor(async () => (await call(alice.client, "taskgate_status", { taskId })).structuredContent.status === "cancelled", { what: "cancelled" });
    expect((await call(alice.client, "taskgate_result", { taskId })).isError).toBe(true);
  });

  it("tells the model what it got wrong as a tool error", async () => {
    expect((await call(alice.client, "taskgate_status", {})).isError).toBe(true);
    expect(textOf(await call(alice.client, "taskgate_status", { taskId: "nope" }))).toContain("No task");
    const sleeping = (await call(alice.client, "sleep", { seconds: 1 })).structuredContent.taskId;
    const refused = await call(alice.client, "taskgate_answer", { taskId: sleeping, response: { confirm: true } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("asks nothing");
  });

  it("serves a 2026-07-28 caller without the extension the same way, and a caller with it as before", async () => {
    const listed = await modern(gw.mcpUrl, "tools/list", {}, { headers: as("alice") });
    expect(listed.body.result.tools.map((t: any) => t.name)).toEqual(expect.arrayContaining(GATEWAY_TOOLS));
    const aware = await modern(gw.mcpUrl, "tools/list", {}, { headers: as("alice"), capabilities: WITH_TASKS });
    expect(aware.body.result.tools.map((t: any) => t.name)).not.toContain("taskgate_status");
    const detached = (await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 1 } }, { headers: as("alice") })).body.result;
    expect(detached).toMatchObject({ resultType: "complete", structuredContent: { status: "working" } });
    const taskId = detached.structuredContent.taskId;
    const done = await waitFor(
      async () => {
        const r = (await modern(gw.mcpUrl, "tools/call", { name: "taskgate_result", arguments: { taskId } }, { headers: as("alice") })).body.result;
        return textOf(r) === "Slept 1 s" ? r : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "modern result" },
    );
    expect(done.resultType).toBe("complete");
    // The same task is bound to alice on every wire: her 2025-11-25 session reads it too.
    expect(textOf(await call(alice.client, "taskgate_result", { taskId }))).toBe("Slept 1 s");
    const withTasks = await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 1 } }, { headers: as("alice"), capabilities: WITH_TASKS });
    expect(withTasks.body.result.resultType).toBe("task");
  });

  it("leaves forbidden tools and block-mode upstreams as plain calls", async () => {
    const failing = await call(alice.client, "fail", { message: "boom" }).catch((err: unknown) => err);
    expect(JSON.stringify(failing)).toContain("boom");
    const blocking = await connectClient(`${gw.url}/block`, { headers: as("alice") });
    try {
      expect((await blocking.client.listTools()).tools.map((t) => t.name)).not.toContain("taskgate_status");
      expect(textOf(await call(blocking.client, "sleep", { seconds: 0.5 }))).toBe("Slept 0.5 s");
      // A required tool is refused to a caller that does not ask for a task (the SDK refuses it itself).
      await expect(call(blocking.client, "hang", {})).rejects.toThrow(/hang/);
    } finally {
      await blocking.client.close();
    }
  });
});

describe("handle mode under the caller's limits and audit", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      auth: bearerAuth("alice"),
      limits: { maxActiveTasksPerPrincipal: 1 },
      tasks: { unawareClients: "handle" },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { hang: { taskSupport: "required" } } }],
    });
  });
  afterAll(async () => gw?.stop());

  it("counts its tasks against maxActiveTasksPerPrincipal and audits them with taskProtocol none", async () => {
    const { client } = await connectClient(gw.mcpUrl, { headers: as("alice") });
    try {
      const { taskId } = ((await call(client, "hang", {})) as any).structuredContent;
      // HTTP 429 with -32000, as for every task over the limit (docs/operations/capacity.md, Limits).
      await expect(call(client, "hang", {})).rejects.toThrow(/Too many active tasks/);
      await call(client, "taskgate_cancel", { taskId });
      await waitFor(() => gw.output().includes('"task ended"'), { what: "the task to end" });
      const audit = gw
        .output()
        .split("\n")
        .filter((l) => l.includes('"audit":"task.create"'))
        .map((l) => JSON.parse(l));
      expect(audit).toEqual([expect.objectContaining({ taskId, taskProtocol: "none" })]);
      // The slot is free again once the task ended.
      const next = await waitFor(
        async () =>
          await call(client, "hang", {}).then(
            (r: any) => r.structuredContent?.taskId,
            () => undefined,
          ),
        { what: "a new task after the first ended" },
      );
      await call(client, "taskgate_cancel", { taskId: next });
      await waitFor(() => gw.output().split('"task ended"').length > 2, { what: "the second task to end" });
    } finally {
      await client.close();
    }
  });
  it("stops a call the client cancels before it detached, upstream too", async () => {
    const { client } = await connectClient(gw.mcpUrl, { headers: as("alice") });
    try {
      const controller = new AbortController();
      const running = client.callTool({ name: "sleep", arguments: { seconds: 30, progressIntervalMs: 100 } }, undefined, {
        signal: controller.signal,
        onprogress: () => controller.abort("the user pressed stop"),
      });
      await expect(running).rejects.toThrow();
      await waitFor(() => gw.output().includes("sleep cancelled"), { what: "the upstream to stop the call" });
    } finally {
      await client.close();
    }
  });
});
