import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/mcp-client.js";
import { modern, getTask, WITH_TASKS } from "../helpers/modern.js";
import { startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH, openSession, post } from "../helpers/raw.js";
import { exampleClient, startExample, type RunningExample, type Seen } from "../helpers/sdk-examples.js";
import { openSse } from "../helpers/sse-reader.js";
import { waitFor } from "../helpers/wait-for.js";

// simpleTaskInteractive.js of @modelcontextprotocol/sdk 1.x: its tools are `taskSupport: required`;
// inside the task it asks with `server.elicitInput` / `server.createMessage` from its tasks/result
// handler without naming that request, so the question travels on the session's GET stream, and is
// the session's first request (id 0). Run directly and through taskgate (default configuration).

type Outcome = { result: string; seen: Seen; statusWhileAsked: string[] };

const ANSWERS = {
  elicit: () => ({ action: "accept" as const, content: { confirm: true } }),
  sample: (prompt: string) => `a haiku: ${prompt}`,
};

/**
 * One call as a 2025-11-25 task with the SDK client: every question is answered only once the
 * caller has seen its task in `input_required` (tasks/get), so the test shows the question waits there.
 */
async function runAsTask(url: string, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  let taskId: string | undefined;
  const statusWhileAsked: string[] = [];
  let caller: Client | undefined;
  const whileAsked = async () => {
    const id = await waitFor(() => taskId, { what: "the task id" });
    const task = await waitFor(
      async () => {
        const t = await caller!.experimental.tasks.getTask(id);
        return t.status === "input_required" ? t : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: `task ${id} in input_required` },
    );
    statusWhileAsked.push(task.status);
  };
  const { client, seen } = await exampleClient(url, {
    elicit: async () => (await whileAsked(), ANSWERS.elicit()),
    sample: async (prompt) => (await whileAsked(), ANSWERS.sample(prompt)),
  });
  caller = client;
  try {
    let result = "";
    for await (const message of client.experimental.tasks.callToolStream({ name: tool, arguments: args }, CallToolResultSchema, { task: {} })) {
      if (message.type === "taskCreated") taskId = message.task.taskId;
      if (message.type === "result") result = textOf(message.result);
      if (message.type === "error") result = `error: ${message.error.message}`;
    }
    return { result, seen, statusWhileAsked };
  } finally {
    await client.close();
  }
}

describe("the SDK's task-native example (simpleTaskInteractive.js), directly and through taskgate", () => {
  let example: RunningExample;
  let gw: GatewayProcess;
  let handle: string;
  beforeAll(async () => {
    example = await startExample("simpleTaskInteractive.js");
    gw = await startGateway({
      upstreams: [
        { name: "tasks", path: "/mcp", http: { url: example.mcpUrl } },
        // Task-unaware callers given a task handle (the gateway tools) instead of waiting.
        { name: "handle", path: "/handle", http: { url: example.mcpUrl }, unawareClients: "handle" },
      ],
    });
    handle = `${gw.url}/handle`;
  });
  afterAll(async () => {
    await gw?.stop();
    await example?.stop();
  });

  it.each([
    ["confirm_delete", { filename: "x.txt" }, "Deleted 'x.txt'", "elicitation/create"],
    ["write_haiku", { topic: "rivers" }, "Haiku:\na haiku: Write a haiku about rivers", "sampling/createMessage"],
  ])(
    "%s through the 2025-11-25 tasks: the same question, answered while the task shows input_required, and the same result",
    async (tool, args, text, method) => {
      const direct = await runAsTask(example.mcpUrl, tool, args);
      const via = await runAsTask(gw.mcpUrl, tool, args);
      expect(direct.result).toBe(text);
      expect(direct.seen.asked.map((a) => a.method)).toEqual([method]);
      expect(via.result).toBe(direct.result);
      expect(via.seen.asked).toEqual(direct.seen.asked);
      expect(via.statusWhileAsked).toEqual(["input_required"]);
    },
  );

  it("takes each of several callers' answers to its own upstream task, whatever the upstream numbered its question", async () => {
    const files = ["a.txt", "b.txt", "c.txt"];
    const outcomes = await Promise.all(files.map((filename) => runAsTask(gw.mcpUrl, "confirm_delete", { filename })));
    expect(outcomes.map((o) => o.result)).toEqual(files.map((f) => `Deleted '${f}'`));
    expect(outcomes.map((o) => o.seen.asked.map((a) => a.message))).toEqual(files.map((f) => [`Are you sure you want to delete '${f}'?`]));
  });

  it.each([
    ["confirm_delete", { filename: "y.txt" }, "elicitation/create", { action: "accept", content: { confirm: true } }, "Deleted 'y.txt'"],
    ["write_haiku", { topic: "snow" }, "sampling/createMessage", { role: "assistant", model: "m", content: { type: "text", text: "white" } }, "Haiku:\nwhite"],
  ])(
    "%s through the tasks extension: the question in inputRequests while input_required, the answer by tasks/update reaching the upstream",
    async (tool, args, method, answer, text) => {
      const capabilities = { ...WITH_TASKS, elicitation: { form: {} }, sampling: {} };
      const call = await modern(gw.mcpUrl, "tools/call", { name: tool, arguments: args }, { capabilities });
      expect(call.body.result).toMatchObject({ resultType: "task" });
      const taskId = call.body.result.taskId as string;
      const asking = await untilTask(gw.mcpUrl, taskId, (t) => t.status === "input_required", "input_required");
      const [key, question] = Object.entries(asking.inputRequests as Record<string, { method: string }>)[0]!;
      expect(question.method).toBe(method);
      const ack = await modern(gw.mcpUrl, "tasks/update", { taskId, inputResponses: { [key]: answer } }, { capabilities: WITH_TASKS });
      expect(ack.body.result).toEqual({ resultType: "complete" });
      const done = await untilTask(gw.mcpUrl, taskId, (t) => t.status !== "working" && t.status !== "input_required", "an end");
      expect(done.status).toBe("completed");
      expect(textOf(done.result)).toBe(text);
    },
  );

  it("asks a caller without task support on its call's own stream and takes its answer to the upstream", async () => {
    const session = await openSession(gw.mcpUrl, { elicitation: {} }, "2025-06-18");
    const headers = { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "tools/call", params: { name: "confirm_delete", arguments: { filename: "z.txt" } } });
    const call = await openSse(gw.mcpUrl, { method: "POST", headers, body });
    try {
      const question = await call.next((m) => m.method === "elicitation/create", "the upstream task's question");
      expect(question.params.message).toBe("Are you sure you want to delete 'z.txt'?");
      expect((await post(gw.mcpUrl, { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { confirm: true } } }, headers)).status).toBe(202);
      const answer = await call.next((m) => m.id === 0 && ("result" in m || "error" in m), "the call's answer");
      expect(answer.result.content).toEqual([{ type: "text", text: "Deleted 'z.txt'" }]);
    } finally {
      call.close();
    }
  });

  it("asks a 2026-07-28 caller without the tasks extension in an MRTR round and takes its retried answer to the upstream", async () => {
    const capabilities = { elicitation: { form: {} } };
    const params = { name: "confirm_delete", arguments: { filename: "v.txt" } };
    const first = await modern(gw.mcpUrl, "tools/call", params, { capabilities });
    expect(first.body.result).toMatchObject({ resultType: "input_required" });
    const [key, question] = Object.entries(first.body.result.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
    expect(question.params.message).toBe("Are you sure you want to delete 'v.txt'?");
    const retry = { ...params, inputResponses: { [key]: { action: "accept", content: { confirm: true } } }, requestState: first.body.result.requestState };
    const second = await modern(gw.mcpUrl, "tools/call", retry, { capabilities });
    expect(second.body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "Deleted 'v.txt'" }] });
  });

  it("shows a task-unaware caller in handle mode the question as input_required, and takes its answer to the upstream", async () => {
    const { client } = await exampleClient(handle);
    try {
      const detached = (await client.callTool({ name: "confirm_delete", arguments: { filename: "w.txt" } })) as any;
      const { taskId } = detached.structuredContent;
      const waiting = await waitFor(async () => {
        const s = ((await client.callTool({ name: "taskgate_status", arguments: { taskId } })) as any).structuredContent;
        return s.status === "input_required" ? s : undefined;
      });
      expect(waiting.questions).toEqual([
        expect.objectContaining({ method: "elicitation/create", params: expect.objectContaining({ message: "Are you sure you want to delete 'w.txt'?" }) }),
      ]);
      const answered = (await client.callTool({ name: "taskgate_answer", arguments: { taskId, response: { confirm: true } } })) as any;
      expect(answered.isError).not.toBe(true);
      expect(answered.structuredContent).toMatchObject({ taskId });
      const done = await waitFor(async () => {
        const r = (await client.callTool({ name: "taskgate_result", arguments: { taskId } })) as any;
        return r.structuredContent?.taskId === taskId || /still running/.test(textOf(r)) ? undefined : r;
      });
      expect(textOf(done)).toBe("Deleted 'w.txt'");
    } finally {
      await client.close();
    }
  });
});

function untilTask(url: string, taskId: string, accept: (task: any) => boolean, what: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      return accept(task) ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what },
  );
}
