import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { startEverythingHttp } from "../fixtures/upstreams.js";
import { EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

// server-everything 2026.8.31 declares tasks.requests.tools.call, and its simulate-research-query
// `execution.taskSupport: "required"`; asked for an ambiguous topic, it asks which one is meant
// mid-task (an elicitation with the related-task _meta, delivered on tasks/result).
const TOOL = "simulate-research-query";
const ARGS = { topic: "python", ambiguous: true };

describe("server-everything's task-required tool over HTTP, through the 2025-11-25 tasks", () => {
  let everything: { url: string; stop(): Promise<void> };
  let gw: GatewayProcess;
  beforeAll(async () => {
    everything = await startEverythingHttp();
    gw = await startGateway({ tasks: { pollIntervalMs: 200 }, upstreams: [{ name: "everything", path: "/mcp", http: { url: everything.url } }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await everything?.stop();
  });

  it("is advertised as required, runs as the upstream's task, asks its question and completes with the upstream's report", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, {
      elicit: (message) => (asked.push(message), { action: "accept", content: { interpretation: "snake" } }),
    });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === TOOL)?.execution?.taskSupport).toBe("required");
    const seen: any[] = [];
    for await (const message of client.experimental.tasks.callToolStream({ name: TOOL, arguments: ARGS }, CallToolResultSchema, { task: {} }))
      seen.push(message);
    expect(seen[0].type).toBe("taskCreated");
    const statuses = seen.filter((m) => m.type === "taskStatus").map((m) => m.task.statusMessage);
    expect(statuses.some((s) => /Gathering sources|Analyzing content|Synthesizing/.test(s ?? ""))).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/python/);
    const last = seen.at(-1);
    expect(last.type).toBe("result");
    expect(last.result.content[0].text).toMatch(/# Research Report: python \(snake\)/);
    // The related-task _meta is the front task's, never the upstream's own id.
    expect(last.result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: seen[0].task.taskId });
    await client.close();
  });
});

describe("server-everything's task-required tool over stdio, on the 2026-07-28 wire", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { pollIntervalMs: 200, detachAfterMs: 300 },
      upstreams: [{ name: "everything", path: "/mcp", stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] } }],
    });
  });
  afterAll(async () => gw?.stop());

  it("becomes a task whose question is answered by tasks/update, completing with the upstream's report", async () => {
    const call = await modern(gw.mcpUrl, "tools/call", { name: TOOL, arguments: ARGS }, { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } });
    expect(call.body.result).toMatchObject({ resultType: "task" });
    const taskId = call.body.result.taskId as string;
    const asking = await waitFor(
      async () => {
        const task = (await getTask(gw.mcpUrl, taskId)).body.result;
        return task.status === "input_required" ? task : undefined;
      },
      { timeoutMs: 15_000, what: "the upstream's question" },
    );
    const [key] = Object.keys(asking.inputRequests);
    await modern(
      gw.mcpUrl,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { interpretation: "comedy" } } } },
      { capabilities: WITH_TASKS },
    );
    const done = await waitFor(
      async () => {
        const task = (await getTask(gw.mcpUrl, taskId)).body.result;
        return task.status === "completed" ? task : undefined;
      },
      { timeoutMs: 20_000, what: "the report" },
    );
    expect(done.result.content[0].text).toMatch(/# Research Report: python \(comedy\)/);
  });

  it("runs it for a caller without the extension too, which just waits (no question asked: it declared no elicitation)", async () => {
    const call = await modern(gw.mcpUrl, "tools/call", { name: TOOL, arguments: { topic: "rust" } });
    expect(call.body.result).toMatchObject({ resultType: "complete" });
    expect(call.body.result.content[0].text).toMatch(/# Research Report: rust/);
  });
});
