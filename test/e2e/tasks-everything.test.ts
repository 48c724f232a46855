import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

describe("tasks of the tasks extension in front of @modelcontextprotocol/server-everything", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { detachAfterMs: 300 },
      upstreams: [{ name: "everything", path: "/mcp", stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] } }],
    });
  });
  afterAll(async () => gw?.stop());

  it("detaches its long-running operation, shows its progress in statusMessage, and completes", async () => {
    const args = { name: "trigger-long-running-operation", arguments: { duration: 2, steps: 4 } };
    const task = (await modern(gw.mcpUrl, "tools/call", args, { capabilities: WITH_TASKS })).body.result;
    expect(task).toMatchObject({ resultType: "task", status: "working" });
    const message = await waitFor(async () => (await getTask(gw.mcpUrl, task.taskId)).body.result.statusMessage, { what: "progress" });
    expect(message).toMatch(/\d\/4|\(\d/);
    const done = await waitFor(
      async () => {
        const t = (await getTask(gw.mcpUrl, task.taskId)).body.result;
        return t.status === "completed" ? t : undefined;
      },
      { timeoutMs: 10_000, what: "completion" },
    );
    expect(done.result).toMatchObject({ resultType: "complete", content: [{ type: "text" }] });
  });
});
