import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { isAlive, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const FIXTURE = { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] };
const tools = { ask: { taskSupport: "required" }, pid: { taskSupport: "required" }, hang_pid: { taskSupport: "required" } };

async function untilStatus(url: string, taskId: string, done: (task: any) => boolean, what: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      return task && done(task) ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what },
  );
}

async function ask(url: string, question: string) {
  return (await modern(url, "tools/call", { name: "ask", arguments: { question } }, { capabilities: ELICIT })).body.result;
}

describe("isolation: per-call on a stdio upstream", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { cancelGraceMs: 200 },
      upstreams: [
        { name: "isolated", path: "/mcp", stdio: FIXTURE, tools, isolation: "per-call", perCallPool: 1 },
        { name: "shared", path: "/shared", stdio: FIXTURE, tools, isolation: "shared" },
      ],
    });
  });
  afterAll(async () => gw?.stop());

  it("ties each question to its own call when several tasks ask at once", async () => {
    const [one, two] = await Promise.all([ask(gw.mcpUrl, "First?"), ask(gw.mcpUrl, "Second?")]);
    const waiting = await Promise.all([one, two].map((t) => untilStatus(gw.mcpUrl, t.taskId, (x) => x.status === "input_required", "a question")));
    for (const [i, task] of waiting.entries()) {
      const [key, request] = Object.entries(task.inputRequests)[0] as [string, any];
      expect(request.params.message).toBe(i === 0 ? "First?" : "Second?");
      await modern(
        gw.mcpUrl,
        "tasks/update",
        { taskId: task.taskId, inputResponses: { [key]: { action: "accept", content: { answer: `answer ${i}` } } } },
        { capabilities: WITH_TASKS },
      );
    }
    const done = await Promise.all([one, two].map((t) => untilStatus(gw.mcpUrl, t.taskId, (x) => x.status === "completed", "completed")));
    expect(done.map((t) => t.result.content[0].text)).toEqual(["answer: answer 0", "answer: answer 1"]);
  });

  it("runs each call in a process of its own, which ends with the call", async () => {
    const tasks = await Promise.all(
      [1, 2].map(async () => (await modern(gw.mcpUrl, "tools/call", { name: "pid", arguments: {} }, { capabilities: WITH_TASKS })).body.result),
    );
    const done = await Promise.all(tasks.map((t) => untilStatus(gw.mcpUrl, t.taskId, (x) => x.status === "completed", "completed")));
    const pids = done.map((t) => Number(t.result.content[0].text));
    expect(new Set(pids).size).toBe(2);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), { timeoutMs: 10_000, what: "the per-call processes to end" });
  });

  it("ends a cancelled call's process after the grace period", async () => {
    const task = (await modern(gw.mcpUrl, "tools/call", { name: "hang_pid", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    const running = await untilStatus(gw.mcpUrl, task.taskId, (x) => /pid \d+/.test(x.statusMessage ?? ""), "the call to say its pid");
    const pid = Number(/pid (\d+)/.exec(running.statusMessage)![1]);
    expect(isAlive(pid)).toBe(true);
    await modern(gw.mcpUrl, "tasks/cancel", { taskId: task.taskId }, { capabilities: WITH_TASKS });
    await untilStatus(gw.mcpUrl, task.taskId, (x) => x.status === "cancelled", "cancelled");
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, what: "the cancelled call's process to end" });
  });

  it("refuses an ambiguous question on a shared stdio session and names the setting in its warning", async () => {
    const url = `${gw.url}/shared`;
    const [one, two] = await Promise.all([ask(url, "First?"), ask(url, "Second?")]);
    const ended = await Promise.all([one, two].map((t) => untilStatus(url, t.taskId, (x) => x.status !== "working", "a question or an end")));
    expect(ended.some((t) => t.status !== "input_required")).toBe(true);
    // The log line travels through a pipe of its own: it may arrive after the task's status.
    await waitFor(() => gw.output().includes("Leave `isolation` at its default (pool)"), { what: "the attribution warning naming the setting" });
    await Promise.all([one, two].map((t) => modern(url, "tasks/cancel", { taskId: t.taskId }, { capabilities: WITH_TASKS })));
  });
});
