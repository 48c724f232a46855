import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { callWithExtTasks } from "../helpers/ext-tasks.js";
import { textOf } from "../helpers/mcp-client.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";

describe("dialect A questions reach every kind of client", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    gw = await startGateway({ store, tasks: { pollIntervalMs: 100, inputTimeoutMs: 8000 }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { deploy: { taskSupport: "required" } } }] });
  });
  afterAll(async () => gw?.stop());

  it("an ext-tasks 0.2.x client completes an elicitation task", async () => {
    const run = await callWithExtTasks(gw.mcpUrl, "deploy", { service: "billing", seconds: 0.1 }, () => ({ action: "accept", content: { confirm: true } }));
    expect(run.asked).toEqual([expect.stringContaining("billing")]);
    expect(textOf(run.result)).toContain("Deployed billing");
  });
});
