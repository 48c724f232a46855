import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { nativeLog, nextLogged } from "../helpers/native.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH, messagesOf, openSession, post } from "../helpers/raw.js";
import { openSse } from "../helpers/sse-reader.js";
import { waitFor } from "../helpers/wait-for.js";

/** The task-native demo server keeps a task at most this long (src/demo/native/work.ts). */
const UPSTREAM_MAX_TTL_MS = 600_000;
const TERMINAL = ["completed", "failed", "cancelled"];

type Message = { type: string; task?: { taskId: string; ttl: number | null }; result?: unknown; error?: unknown };

async function drain(stream: AsyncIterable<unknown>): Promise<Message[]> {
  const seen: Message[] = [];
  for await (const message of stream) seen.push(message as Message);
  return seen;
}

function rpc(url: string, sessionId: string, version: string, method: string, params: Record<string, unknown>) {
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": version };
  return post(url, { jsonrpc: "2.0", id: method, method, params }, headers)
    .then(messagesOf)
    .then((all) => all.find((m) => m.id === method));
}

// The bridge writes the upstream task into the task record: both stores run every case.
describe.each(["memory", "redis"] as const)(
  "an upstream that runs tools as its own 2025-11-25 tasks, for a client of the 2025-11-25 tasks (%s store)",
  (kind) => {
    let demo: RunningProcess & { mcpUrl: string };
    let gw: GatewayProcess;
    beforeAll(async () => {
      demo = await startDemoHttp(["--native-tasks"]);
      const store = kind === "redis" ? { redisUrl: inject("redisUrl"), keyPrefix: `native-a-${Date.now()}:` } : {};
      gw = await startGateway({
        store,
        tasks: { detachAfterMs: 300, pollIntervalMs: 200 },
        upstreams: [{ name: "native", path: "/mcp", http: { url: demo.mcpUrl } }],
      });
    });
    afterAll(async () => {
      await gw?.stop();
      await demo?.stop();
    });

    it("advertises the tools the upstream requires tasks for as required, and the rest by taskgate's policy", async () => {
      const { client } = await connectClient(gw.mcpUrl);
      const { tools } = await client.listTools();
      const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
      expect(support).toEqual({ review: "required", crunch: "required", tally: "optional", echo: "optional" });
      await client.close();
    });

    it("runs a required tool as the upstream's task: its question answered, its result the upstream's, its TTL no longer than the upstream's", async () => {
      const asked: string[] = [];
      const { client } = await connectClient(gw.mcpUrl, { elicit: (message) => (asked.push(message), { action: "accept", content: { approve: true } }) });
      const before = nativeLog(demo, "started", "review");
      const seen = await drain(
        client.experimental.tasks.callToolStream({ name: "review", arguments: { subject: "the-plan", ms: 100 } }, CallToolResultSchema, { task: {} }),
      );
      expect(seen[0]?.type).toBe("taskCreated");
      expect(seen.at(-1)).toMatchObject({ type: "result", result: { content: [{ type: "text", text: "approved the-plan" }] } });
      expect(asked).toEqual(["Approve the-plan?"]);
      // Run once upstream, as a task of the upstream's own.
      await nextLogged(demo, "started", before, "review");
      expect(nativeLog(demo, "started", "review").length).toBe(before.length + 1);
      const task = await client.experimental.tasks.getTask(seen[0]!.task!.taskId);
      expect(task.status).toBe("completed");
      expect(task.ttl).toBeLessThan(UPSTREAM_MAX_TTL_MS + 10_000);
      await client.close();
    });

    it("turns tasks/cancel into the upstream's tasks/cancel: the upstream's task stops", async () => {
      const { client } = await connectClient(gw.mcpUrl);
      const before = nativeLog(demo, "saw its cancel");
      const started = nativeLog(demo, "started", "crunch");
      const stream = client.experimental.tasks.callToolStream({ name: "crunch", arguments: { ms: 60_000, steps: 600 } }, CallToolResultSchema, { task: {} });
      const first = (await stream[Symbol.asyncIterator]().next()).value as Message;
      const taskId = first.task!.taskId;
      await nextLogged(demo, "started", started, "crunch");
      await waitFor(async () => /Step \d+\/600/.test((await client.experimental.tasks.getTask(taskId)).statusMessage ?? ""), {
        what: "the upstream's statusMessage",
      });
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.status).toBe("cancelled");
      await nextLogged(demo, "saw its cancel", before);
      const task = await waitFor(
        async () => {
          const t = await client.experimental.tasks.getTask(taskId);
          return TERMINAL.includes(t.status) ? t : undefined;
        },
        { what: "the task to end" },
      );
      expect(task.status).toBe("cancelled");
      await client.close();
    });

    it("lets a caller without task support wait for a required tool: taskgate follows the upstream's task for it", async () => {
      const session = await openSession(gw.mcpUrl, {}, "2025-06-18");
      const before = nativeLog(demo, "started", "crunch");
      const answer = await rpc(gw.mcpUrl, session, "2025-06-18", "tools/call", { name: "crunch", arguments: { ms: 400, steps: 2 } });
      expect(answer.result).toEqual({ content: [{ type: "text", text: "crunched in 2 steps" }] });
      expect(nativeLog(demo, "started", "crunch").length).toBe(before.length + 1);
    });

    it("asks a waiting caller the upstream task's question on its call's own stream, and takes its answer", async () => {
      const session = await openSession(gw.mcpUrl, { elicitation: {} }, "2025-06-18");
      const headers = { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
      const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "review", arguments: { subject: "memo", ms: 50 } } });
      const call = await openSse(gw.mcpUrl, { method: "POST", headers, body });
      const question = await call.next((m) => m.method === "elicitation/create", "the upstream task's question");
      expect(question.params.message).toBe("Approve memo?");
      expect(JSON.stringify(question)).not.toContain("related-task");
      expect((await post(gw.mcpUrl, { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { approve: true } } }, headers)).status).toBe(202);
      const answer = await call.next((m) => m.id === 7, "the call's answer");
      expect(answer.result).toEqual({ content: [{ type: "text", text: "approved memo" }] });
      call.close();
    });

    it("refuses a plain call of a required tool from a 2025-11-25 session with -32601, as the spec says, and keeps the upstream's tasks from clients", async () => {
      const session = await openSession(gw.mcpUrl, {}, "2025-11-25");
      const plain = await rpc(gw.mcpUrl, session, "2025-11-25", "tools/call", { name: "review", arguments: { subject: "x" } });
      expect(plain.error.code).toBe(-32601);
      const older = await openSession(gw.mcpUrl, {}, "2025-06-18");
      const listed = await rpc(gw.mcpUrl, older, "2025-06-18", "tasks/list", {});
      expect(listed.error.code).toBe(-32601);
    });

    it("calls an optional tool plainly for a plain call, and a forbidden one as always", async () => {
      const { client } = await connectClient(gw.mcpUrl);
      expect(textOf(await client.callTool({ name: "tally", arguments: { ms: 100, steps: 1 } }))).toBe("tallied in 1 steps");
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hi" } }))).toBe("hi");
      await client.close();
    });
  },
);
