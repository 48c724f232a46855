import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openListen } from "../helpers/listen.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

describe("subscriptions/listen with notifications.taskIds (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, and https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  const keyPrefix = `t${randomBytes(4).toString("hex")}:`;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix };
    const config = { store, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { deploy: { taskSupport: "required" } } }] };
    [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("pushes every change of a task owned by another process, with the full DetailedTask and the subscriptionId", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "api", seconds: 0.2 } }, { capabilities: ELICIT })).body.result;
    expect(task.resultType).toBe("task");
    const listen = await openListen(b.mcpUrl, "listen-1", { taskIds: [task.taskId, "no-such-task"] }, WITH_TASKS);
    try {
      expect(listen.status).toBe(200);
      const ack = await listen.next((m) => m.method === "notifications/subscriptions/acknowledged", "the acknowledgement");
      expect(ack.params).toEqual({ _meta: { [SUBSCRIPTION]: "listen-1" }, notifications: { taskIds: [task.taskId] } });

      const isTask = (status: string) => (m: any) => m.method === "notifications/tasks" && m.params.status === status;
      const asking = await listen.next(isTask("input_required"), "input_required pushed");
      const [key, question] = Object.entries(asking.params.inputRequests)[0] as [string, any];
      expect(question.params.message).toBe("Deploy api?");
      const answer = { taskId: task.taskId, inputResponses: { [key]: { action: "accept", content: { confirm: true } } } };
      await modern(b.mcpUrl, "tasks/update", answer, { capabilities: WITH_TASKS });

      const done = await listen.next(isTask("completed"), "completed pushed");
      expect(done.params).toMatchObject({
        _meta: { [SUBSCRIPTION]: "listen-1" },
        taskId: task.taskId,
        ttlMs: expect.any(Number),
        result: { content: [{ text: "Deployed api" }] },
      });
      expect(done.params).not.toHaveProperty("resultType");
      const pushed = listen.messages.filter((m) => m.method === "notifications/tasks");
      expect(pushed.every((m) => m.params._meta[SUBSCRIPTION] === "listen-1" && m.params.taskId === task.taskId)).toBe(true);
      expect(pushed.map((m) => m.params.status)).toContain("working");
    } finally {
      listen.close();
    }
  });

  it("stops following the task once the client closes the stream", async () => {
    const task = (await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "idle" } }, { capabilities: ELICIT })).body.result;
    const redis = new Redis(inject("redisUrl"));
    const followers = async () => ((await redis.pubsub("NUMSUB", `${keyPrefix}ch:task:${task.taskId}`)) as [string, number])[1];
    try {
      const listen = await openListen(b.mcpUrl, 9, { taskIds: [task.taskId] }, WITH_TASKS);
      await listen.next((m) => m.method === "notifications/tasks" && m.params.status === "input_required", "input_required pushed");
      expect(await followers()).toBe(1);
      listen.close();
      await waitFor(async () => (await followers()) === 0, { what: "the listen stream's subscription to end" });
    } finally {
      await modern(a.mcpUrl, "tasks/cancel", { taskId: task.taskId }, { capabilities: WITH_TASKS });
      redis.disconnect();
    }
  });

  it("acknowledges no task it does not know, and refuses task notifications without the extension (-32021)", async () => {
    const listen = await openListen(a.mcpUrl, 7, { taskIds: ["no-such-task"] }, WITH_TASKS);
    const ack = await listen.next((m) => m.method === "notifications/subscriptions/acknowledged", "the acknowledgement");
    expect(ack.params.notifications).toEqual({ taskIds: [] });
    listen.close();

    const refused = await openListen(a.mcpUrl, 8, { taskIds: ["no-such-task"] }, {});
    expect(refused.status).toBe(400);
    expect(refused.messages[0]).toMatchObject({
      id: 8,
      error: { code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } },
    });
  });
});
