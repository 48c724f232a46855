import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { inspectorCall } from "../helpers/inspector.js";
import { textOf } from "../helpers/mcp-client.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

// The Inspector's CLI opens a new session for every run, so the task must be bound to a principal
// that outlives a session: bearer auth (without auth a legacy session is the only binding).
describe("a real task-unaware client: the MCP Inspector CLI in plain mode, through the gateway tools", () => {
  let gw: GatewayProcess;
  const alice = as("alice");
  const run = (tool: string, args: Record<string, unknown>) => inspectorCall(gw.mcpUrl, tool, args, alice);
  /** Ask for the result (one Inspector run per poll) until the task is no longer running. */
  const resultOf = (taskId: string) =>
    waitFor(
      async () => {
        const r = await run("taskgate_result", { taskId });
        return /still running|waits for an answer/i.test(textOf(r)) ? undefined : r;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `the result of ${taskId}` },
    );

  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    gw = await startGateway({
      store,
      auth: bearerAuth("alice"),
      tasks: { detachAfterMs: 500, unawareClients: "handle" },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
    });
  });
  afterAll(async () => gw?.stop());

  it("calls a long tool, follows it with the status and result tools, and gets the upstream's own result", async () => {
    const detached = await run("sleep", { seconds: 4, progressIntervalMs: 500 });
    expect(detached.isError).not.toBe(true);
    const taskId: string = detached.structuredContent.taskId;
    expect(taskId).toEqual(expect.any(String));
    expect(textOf(detached)).toContain(`"taskId":"${taskId}"`);
    const status = await run("taskgate_status", { taskId });
    expect(status.structuredContent).toMatchObject({ taskId, status: expect.stringMatching(/working|completed/) });
    expect(await resultOf(taskId)).toEqual({ content: [{ type: "text", text: "Slept 4 s" }] });
  }, 90_000);

  it("answers the demo deploy's confirmation through the answer tool", async () => {
    const detached = await run("deploy", { service: "billing", seconds: 1 });
    const taskId: string = detached.structuredContent.taskId;
    const question = await waitFor(async () => (await run("taskgate_status", { taskId })).structuredContent.questions?.[0], {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: "the question",
    });
    expect(question).toMatchObject({ method: "elicitation/create", params: { message: "Deploy billing?" } });
    const answered = await run("taskgate_answer", { taskId, response: { action: "accept", content: { confirm: true } } });
    expect(answered.isError).not.toBe(true);
    expect(answered.structuredContent).toMatchObject({ taskId });
    expect(textOf(await resultOf(taskId))).toBe("Deployed billing");
  }, 90_000);
});
