import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const SECRET = "s3cr3t-argument-value-4f1c";

describe("structured logs: JSON lines with request id, task id, upstream and task protocol", () => {
  let gw: GatewayProcess;
  const lines = () =>
    gw
      .output()
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(async () => {
    gw = await startGateway({
      log: { level: "info" },
      tasks: { detachAfterMs: 100 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { echo: { taskSupport: "required" } } }],
    });
  });
  afterAll(async () => gw?.stop());

  it("ties a task's lines to the request that made it, and never logs the tool's arguments", async () => {
    const created = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "echo", arguments: { text: SECRET } },
      {
        capabilities: WITH_TASKS,
        headers: { "x-request-id": "req-abc-123", authorization: `Bearer ${SECRET}` },
      },
    );
    expect(created.headers.get("x-request-id")).toBe("req-abc-123");
    const taskId = created.body.result.taskId as string;
    await waitFor(async () => (await getTask(gw.mcpUrl, taskId)).body.result.status === "completed", { what: "the task to complete" });
    const ended = await waitFor(() => lines().find((l) => l.msg === "task ended" && l.taskId === taskId), { what: "the task ended line" });
    const made = lines().find((l) => l.msg === "task created" && l.taskId === taskId);
    expect(made).toMatchObject({ level: "info", reqId: "req-abc-123", upstream: "demo", taskProtocol: "extension", tool: "echo", service: "taskgate" });
    expect(ended).toMatchObject({ level: "info", reqId: "req-abc-123", upstream: "demo", taskProtocol: "extension", status: "completed" });
    expect(gw.output()).not.toContain(SECRET);
    // Every line is JSON (lines() throws otherwise) and no debug line is written at level info.
    expect(lines().filter((l) => l.level === "debug")).toEqual([]);
  });

  it("mints a request id when the caller sends none, or one that is not a plain token", async () => {
    const minted = await modern(gw.mcpUrl, "tools/list", {}, { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(minted.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
