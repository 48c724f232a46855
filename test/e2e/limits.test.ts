import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth, openSessionAs } from "../helpers/auth.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };

describe("per-principal limits answer with a clear error", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` },
      auth: bearerAuth("carol", "dave", "erin", "frank", "gina"),
      tasks: { detachAfterMs: 100, cancelGraceMs: 100 },
      limits: {
        maxActiveTasksPerPrincipal: 2,
        maxSseStreamsPerPrincipal: 1,
        taskRequestsPerSecond: 2,
        taskRequestBurst: 6,
        maxInputResponsesBytes: 1024,
        maxResultBytes: 2000,
      },
      upstreams: [
        {
          name: "demo",
          path: "/mcp",
          stdio: demoStdio(),
          tools: { hang: { taskSupport: "required" }, echo: { taskSupport: "required" }, deploy: { taskSupport: "required" } },
        },
      ],
    });
  });
  afterAll(async () => gw?.stop());

  const call = (who: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS) =>
    modern(gw.mcpUrl, method, params, { capabilities, headers: as(who) });

  // First: over stdio an upstream question is attributed to the only call in flight (docs/operations/isolation.md), so
  // this runs before the other tests leave hanging calls behind.
  it("refuses inputResponses over maxInputResponsesBytes with -32602 and keeps the question open", async () => {
    const answer = await call("frank", "tools/call", { name: "deploy", arguments: { service: "api", seconds: 0.1 } }, ELICIT);
    const created = answer.body.result;
    expect(answer.body).toMatchObject({ result: { resultType: "task" } });
    const waiting = await waitFor(
      async () => {
        const t = (await call("frank", "tasks/get", { taskId: created.taskId })).body.result;
        return t?.status === "input_required" ? t : undefined;
      },
      { intervalMs: 700, what: "the deploy task to ask" },
    );
    const key = Object.keys(waiting.inputRequests)[0]!;
    const big = await call("frank", "tasks/update", {
      taskId: created.taskId,
      inputResponses: { [key]: { action: "accept", content: { note: "y".repeat(2000) } } },
    });
    expect(big.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("limits.maxInputResponsesBytes") });
    expect((await call("frank", "tasks/get", { taskId: created.taskId })).body.result.status).toBe("input_required");
  });

  it("refuses a task past maxActiveTasksPerPrincipal with 429, per principal, until one ends", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await call("carol", "tools/call", { name: "hang", arguments: {} })).body.result.taskId);
    const refused = await call("carol", "tools/call", { name: "hang", arguments: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: -32000, message: expect.stringContaining("Too many active tasks") });
    expect((await call("dave", "tools/call", { name: "hang", arguments: {} })).body.result).toMatchObject({ resultType: "task" });
    await call("carol", "tasks/cancel", { taskId: ids[0] });
    await waitFor(async () => (await call("carol", "tools/call", { name: "hang", arguments: {} })).status === 200, {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: "a slot freed by the cancelled task",
    });
  });

  it("fails a task whose result is over maxResultBytes, saying so", async () => {
    const created = (await call("erin", "tools/call", { name: "echo", arguments: { text: "x".repeat(3000) } })).body.result;
    const ended = await waitFor(
      async () => {
        const t = (await call("erin", "tasks/get", { taskId: created.taskId })).body.result;
        return t?.status === "working" ? undefined : t;
      },
      { intervalMs: 700, what: "the echo task to end" },
    );
    expect(ended).toMatchObject({ status: "failed", error: { code: -32603, message: expect.stringContaining("limits.maxResultBytes") } });
  });

  it("rate-limits tasks/* per principal with 429 and Retry-After", async () => {
    const taskId = (await call("gina", "tools/call", { name: "hang", arguments: {} })).body.result.taskId;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await call("gina", "tasks/get", { taskId })).status);
    expect(statuses).toContain(429);
    const limited = await call("gina", "tasks/get", { taskId });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(limited.body.error).toMatchObject({ code: -32000 });
    expect((await call("dave", "tasks/get", { taskId: "someone-else" })).status).toBe(200);
  });

  it("refuses a second open SSE stream past maxSseStreamsPerPrincipal, and allows it once the first is closed", async () => {
    const [s1, s2] = [await openSessionAs(gw.mcpUrl, as("dave")), await openSessionAs(gw.mcpUrl, as("dave"))];
    const open = (session: string, signal?: AbortSignal) =>
      fetch(gw.mcpUrl, { headers: { ...as("dave"), accept: "text/event-stream", "mcp-session-id": session }, ...(signal ? { signal } : {}) });
    const first = new AbortController();
    expect((await open(s1, first.signal)).status).toBe(200);
    const second = await open(s2);
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining("open streams") } });
    first.abort();
    const again = new AbortController();
    await waitFor(async () => (await open(s2, again.signal)).status === 200, { intervalMs: 100, what: "the stream slot freed" });
    again.abort();
  });
});
