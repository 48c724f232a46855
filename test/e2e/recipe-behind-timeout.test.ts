import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse } from "yaml";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { openSession, post } from "../helpers/raw.js";
import { startTimeoutProxy, type TimeoutProxy } from "../helpers/timeout-proxy.js";
import { waitFor } from "../helpers/wait-for.js";

const RECIPE = join(ROOT, "config/recipes/behind-timeout.yaml");
const TOOL = { name: "sleep", arguments: { seconds: 20, progressIntervalMs: 1000 } };
const FOLLOW = { timeoutMs: 60_000, intervalMs: 1000 };

// docs/guides/behind-a-timeout.md: a hop that cuts every request at 5 s and idle streams at 10 s stands between
// the clients and taskgate, run from the recipe's own file; a 20 s tool completes for all three
// kinds of client, while the same call made plain is cut.
describe("recipe: behind a timeout-limited hop", () => {
  let gw: GatewayProcess;
  let hop: TimeoutProxy;
  let url: string;
  beforeAll(async () => {
    const recipe = parse(readFileSync(RECIPE, "utf8"));
    gw = await startGateway({ ...recipe, store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` } });
    hop = await startTimeoutProxy(gw.url, { maxRequestMs: 5_000, idleMs: 10_000 });
    url = `${hop.url}/mcp`;
  });
  afterAll(async () => {
    await hop?.close();
    await gw?.stop();
  });

  it.concurrent("completes for a client of the 2025-11-25 tasks (SDK 1.x experimental tasks)", async () => {
    const { client } = await connectClient(url);
    try {
      const seen: Array<{ type: string; result?: unknown }> = [];
      for await (const message of client.experimental.tasks.callToolStream(TOOL, CallToolResultSchema, { task: {}, timeout: 60_000 }))
        seen.push(message as { type: string; result?: unknown });
      expect(seen.at(-1)).toMatchObject({ type: "result", result: { content: [{ type: "text", text: "Slept 20 s" }] } });
    } finally {
      await client.close();
    }
  }, 90_000);

  it.concurrent("completes for a client of the tasks extension (2026-07-28)", async () => {
    const created = (await modern(url, "tools/call", TOOL, { capabilities: WITH_TASKS })).body.result;
    expect(created.resultType).toBe("task");
    const done = await waitFor(
      async () => {
        const task = (await getTask(url, created.taskId)).body.result;
        return task.status === "working" ? undefined : task;
      },
      { ...FOLLOW, what: "the tasks extension task" },
    );
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 20 s" }] } });
  }, 90_000);

  it.concurrent("completes for a task-unaware client through the gateway tools (handle mode)", async () => {
    const { client } = await connectClient(url);
    try {
      const detached = (await client.callTool(TOOL)) as any;
      const { taskId } = detached.structuredContent;
      const result = await waitFor(
        async () => {
          const r = await client.callTool({ name: "taskgate_result", arguments: { taskId } });
          return textOf(r).startsWith("Slept") ? r : undefined;
        },
        { ...FOLLOW, what: "the gateway result" },
      );
      expect(textOf(result)).toBe("Slept 20 s");
    } finally {
      await client.close();
    }
  }, 90_000);

  it.concurrent("is cut when the same call is made plain (no task asked for), which is what the hop does to a blocking call", async () => {
    // A task-aware session (it declares tasks) that asks for no task on this call: a plain call.
    // The hop is shared with the other tests running at once: this request is told apart by a header of its own.
    const sessionId = await openSession(url, { tasks: {} }, "2025-11-25");
    const id = randomBytes(8).toString("hex");
    // The hop answers 504 itself when nothing was sent yet, and drops the stream when something was.
    const outcome = await post(
      url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: TOOL },
      { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25", "x-hop-request": id },
    )
      .then(async (res) => {
        const text = await res.text();
        return res.status === 504 && text === "hop duration limit" ? "504 from the hop" : `${res.status}: ${text.slice(0, 300)}`;
      })
      .catch((err: unknown) => `dropped (${String(err)})`);
    expect(outcome).toMatch(/^(dropped|504 from the hop)/);
    expect(hop.cutOf(id)).toBe("duration");
  }, 90_000);
});
