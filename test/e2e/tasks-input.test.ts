import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };

async function until(url: string, taskId: string, status: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      if (["completed", "failed", "cancelled"].includes(task?.status) && task.status !== status) throw new Error(`ended ${JSON.stringify(task)}`);
      return task?.status === status ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what: `task ${taskId} to be ${status}` },
  );
}

describe("mid-call input without a held connection (dialect B)", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = (tasks: Record<string, unknown>) => ({ store, tasks: { detachAfterMs: 2000, ...tasks }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
    [a, b] = await Promise.all([startGateway(config({})), startGateway(config({ inputTimeoutMs: 600 }))]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("turns an upstream elicitation into input_required, answered with tasks/update on another replica", async () => {
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
    // The same pending request is repeated on every poll, from any replica.
    expect((await getTask(b.mcpUrl, task.taskId)).body.result.inputRequests).toEqual(waiting.inputRequests);

    const update = { taskId: task.taskId, inputResponses: { [key]: { action: "accept", content: { confirm: true } }, unknown: { action: "decline" } } };
    const ack = await modern(b.mcpUrl, "tasks/update", update, { capabilities: WITH_TASKS });
    expect(ack.body.result).toEqual({ resultType: "complete" });
    const done = await until(a.mcpUrl, task.taskId, "completed");
    expect(done.result.content[0].text).toContain("Deployed billing");
    // A retry of the same answer is safe.
    expect((await modern(a.mcpUrl, "tasks/update", update, { capabilities: WITH_TASKS })).body.result).toEqual({ resultType: "complete" });
  });

  it("never lists a request the client did not declare a capability for: the upstream gets an error", async () => {
    const res = await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "x" } }, { capabilities: WITH_TASKS });
    // Refused before anything detached: the demo server ends the call with that JSON-RPC error.
    expect(res.body.error ?? res.body.result).toBeDefined();
    expect(JSON.stringify(res.body)).toContain("did not declare the elicitation capability");
    expect(res.body.result?.resultType).not.toBe("task");
  });

  it("answers the upstream with an error when nobody answers within inputTimeoutMs", async () => {
    const task = (await modern(b.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "late" } }, { capabilities: ELICIT })).body.result;
    await until(b.mcpUrl, task.taskId, "input_required");
    const failed = await until(b.mcpUrl, task.taskId, "failed");
    expect(failed.error.message).toContain("inputTimeoutMs");
  });
});
