import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { openSession } from "../helpers/raw.js";
import { startRedis, uniquePrefix, type RedisProcess } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";

const TERMINAL = ["completed", "failed", "cancelled"];

describe("Prometheus metrics on /metrics after a known workload", () => {
  let redis: RedisProcess;
  let gw: GatewayProcess;
  let tasksGets = 0;
  const poll = async (taskId: string) => {
    tasksGets++;
    return (await getTask(gw.mcpUrl, taskId)).body.result;
  };
  const finished = (taskId: string) =>
    waitFor(
      async () => {
        const task = await poll(taskId);
        return TERMINAL.includes(task?.status) ? task : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, what: `task ${taskId} to end` },
    );
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities: WITH_TASKS })).body.result;

  beforeAll(async () => {
    // A Redis of its own: the last test stops it to count store errors.
    redis = await startRedis();
    gw = await startGateway({
      store: { redisUrl: redis.url, keyPrefix: uniquePrefix() },
      // A lease long enough that a loaded machine's pause cannot cost one (the test counts none lost),
      // short enough that a renewal comes within a second.
      tasks: { detachAfterMs: 300, cancelGraceMs: 200, leaseMs: 3000 },
      upstreams: [
        {
          name: "demo",
          path: "/mcp",
          stdio: demoStdio(),
          tools: { fail: { taskSupport: "required" }, crash: { taskSupport: "required" }, hang: { taskSupport: "required" } },
        },
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await redis?.stop();
  });

  it("counts tasks by upstream, tool and end, time to detach, upstream calls, passthrough and tasks/get", async () => {
    for (let i = 0; i < 3; i++) expect((await modern(gw.mcpUrl, "tools/list")).body.result.tools.length).toBeGreaterThan(0);
    expect((await call("echo", { text: "inline" })).resultType).toBe("complete");
    const failing = await call("fail", { message: "bad input" });
    const crashing = await call("crash", { message: "kaboom" });
    expect((await finished(failing.taskId)).status).toBe("completed");
    expect((await finished(crashing.taskId)).status).toBe("failed");

    const hanging = await call("hang");
    // The ended calls leave the owner's set just after their terminal write: wait, do not assume.
    await waitFor(async () => sample(await scrape(gw.url), "taskgate_tasks_in_flight") === 1, { what: "one task in flight" });
    await waitFor(async () => (sample(await scrape(gw.url), "taskgate_lease_renewals_total") ?? 0) > 0, { what: "a lease renewal" });
    await modern(gw.mcpUrl, "tasks/cancel", { taskId: hanging.taskId }, { capabilities: WITH_TASKS });
    expect((await finished(hanging.taskId)).status).toBe("cancelled");

    const text = await waitFor(
      async () => {
        const scraped = await scrape(gw.url);
        return sample(scraped, "taskgate_tasks_in_flight") === 0 ? scraped : undefined;
      },
      { what: "no task in flight" },
    );
    const demo = { upstream: "demo" };
    for (const tool of ["fail", "crash", "hang"]) expect(sample(text, "taskgate_tasks_created_total", { ...demo, tool })).toBe(1);
    expect(sample(text, "taskgate_tasks_created_total", { ...demo, tool: "echo" })).toBeUndefined();
    expect(sample(text, "taskgate_tasks_ended_total", { ...demo, tool: "fail", status: "completed" })).toBe(1);
    expect(sample(text, "taskgate_tasks_ended_total", { ...demo, tool: "crash", status: "failed" })).toBe(1);
    expect(sample(text, "taskgate_tasks_ended_total", { ...demo, tool: "hang", status: "cancelled" })).toBe(1);
    expect(sample(text, "taskgate_tasks_ended_total")).toBe(3);
    expect(sample(text, "taskgate_detach_seconds_count", demo)).toBe(3);
    expect(sample(text, "taskgate_upstream_call_duration_seconds_count", { ...demo, method: "tools/call" })).toBe(4);
    expect(sample(text, "taskgate_upstream_call_duration_seconds_count", { ...demo, method: "tools/call", outcome: "error" })).toBe(2);
    expect(sample(text, "taskgate_passthrough_duration_seconds_count", { ...demo, method: "tools/list" })).toBe(3);
    expect(sample(text, "taskgate_passthrough_duration_seconds_count", { ...demo, method: "tools/call" })).toBeUndefined();
    expect(sample(text, "taskgate_tasks_get_duration_seconds_count", demo)).toBe(tasksGets);
    expect(sample(text, "taskgate_lease_losses_total")).toBe(0);
    expect(sample(text, "taskgate_store_errors_total")).toBeUndefined();
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("counts open SSE streams while a client holds one", async () => {
    const sessionId = await openSession(gw.mcpUrl);
    const abort = new AbortController();
    const res = await fetch(gw.mcpUrl, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    await waitFor(async () => sample(await scrape(gw.url), "taskgate_sse_streams_open") === 1, { what: "one open SSE stream" });
    abort.abort();
    await waitFor(async () => sample(await scrape(gw.url), "taskgate_sse_streams_open") === 0, { what: "the SSE stream counted as closed" });
  });

  it("counts store errors by operation when Redis stops answering", async () => {
    await redis.stop("SIGKILL");
    const res = await getTask(gw.mcpUrl, "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx");
    expect(res.body.error.message).toMatch(/task store unavailable/);
    // tasks/get reads what it renders: the store operation viewTask.
    expect(sample(await scrape(gw.url), "taskgate_store_errors_total", { operation: "viewTask" })).toBeGreaterThanOrEqual(1);
  });
});
