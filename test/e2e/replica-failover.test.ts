import { afterEach, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import type { GatewayProcess } from "../helpers/processes.js";
import { messagesOf, openSession, post } from "../helpers/raw.js";
import { ended, FAST_TASKS, startReplicas, startTask, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/** From SIGKILL to terminal: the lease runs out, then the next sweep (plus a takeover of the reaper's lock, plus slack). */
const REAPED_WITHIN_MS = FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 3_000;

describe("a replica that dies: its tasks end truthfully on the replicas that live", () => {
  let gateways: GatewayProcess[] = [];
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  it("fails the tasks of a SIGKILLed owner within leaseMs + the reaper interval, and leaves the others alone", async () => {
    gateways = await startReplicas(3, inject("redisUrl"));
    const [a, b, c] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
    const doomed = await Promise.all([1, 2, 3].map(() => startTask(a.mcpUrl, "hang", {})));
    const alive = await startTask(b.mcpUrl, "hang", {});
    await a.stop("SIGKILL");
    for (const id of doomed) {
      const task = await ended([b.mcpUrl, c.mcpUrl], id, REAPED_WITHIN_MS);
      expect(task).toMatchObject({ status: "failed", error: { code: -32603 } });
      expect(task.statusMessage).toMatch(/replica running this call stopped/);
    }
    // Whichever live replica swept counted it.
    const scraped = await Promise.all([b, c].map(async (g) => (await fetch(`${g.url}/metrics`)).text()));
    const reaped = scraped.map((text) => Number(/taskgate_reaper_actions_total\{action="failed"\} (\d+)/.exec(text)?.[1] ?? 0));
    expect(reaped[0]! + reaped[1]!).toBe(doomed.length);
    // The live owner's task is untouched: still working, still its own, and it can still be cancelled.
    expect((await getTask(c.mcpUrl, alive)).body.result.status).toBe("working");
    await modern(c.mcpUrl, "tasks/cancel", { taskId: alive }, { capabilities: WITH_TASKS });
    expect((await ended([b.mcpUrl], alive)).status).toBe("cancelled");
  });

  it("answers a 2025-11-25 client's tasks/result for a reaped task with the reaper's -32603, on a live replica", async () => {
    gateways = await startReplicas(2, inject("redisUrl"));
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    // Sessions live in the store: the one opened on a is served by b after a dies.
    const session = await openSession(a.mcpUrl, {}, "2025-11-25");
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const rpc = async (url: string, method: string, params: Record<string, unknown>) =>
      (await messagesOf(await post(url, { jsonrpc: "2.0", id: method, method, params }, headers))).find((m) => m.id === method);
    const created = await rpc(a.mcpUrl, "tools/call", { name: "hang", arguments: {}, task: {} });
    const taskId = created.result.task.taskId as string;
    await a.stop("SIGKILL");
    const result = await rpc(b.mcpUrl, "tasks/result", { taskId });
    expect(result.error).toMatchObject({ code: -32603, message: expect.stringMatching(/replica running this call stopped/) });
    expect((await rpc(b.mcpUrl, "tasks/get", { taskId })).result).toMatchObject({ taskId, status: "failed" });
  });

  it("runs a call that is safe to repeat again on a live replica when re-runs are on, and fails one that is not", async () => {
    gateways = await startReplicas(2, inject("redisUrl"), { maxAttempts: 2 });
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    // sleep is annotated readOnlyHint/idempotentHint by the demo server; deploy is not. Deploy
    // asks first, alone in flight: over stdio a question is tied to the only call running.
    const once = await startTask(a.mcpUrl, "deploy", { service: "billing", seconds: 30 }, { ...WITH_TASKS, elicitation: { form: {} } });
    await until([a.mcpUrl], once, (t) => t.status === "input_required", 10_000, "input_required");
    const repeatable = await startTask(a.mcpUrl, "sleep", { seconds: 2, progressIntervalMs: 200 });
    await until([a.mcpUrl], repeatable, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress");
    await a.stop("SIGKILL");
    const rerun = await until([b.mcpUrl], repeatable, (t) => /attempt 2 of 2/.test(t.statusMessage ?? ""), REAPED_WITHIN_MS, "a second attempt");
    expect(rerun.status).toBe("working");
    const done = await ended([b.mcpUrl], repeatable);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 2 s" }] } });
    const failed = await ended([b.mcpUrl], once, REAPED_WITHIN_MS);
    expect(failed).toMatchObject({ status: "failed", statusMessage: expect.stringMatching(/stopped.*attempt 1 of 2/) });
  });
});

describe("graceful drain on SIGTERM", () => {
  let gateways: GatewayProcess[] = [];
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  it("stops taking work at once, lets calls finish within drainMs, fails what is left, and exits 0", async () => {
    gateways = await startReplicas(2, inject("redisUrl"), { drainMs: 2_500 });
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const quick = await startTask(a.mcpUrl, "sleep", { seconds: 1 });
    const stuck = await startTask(a.mcpUrl, "hang", {});
    const exited = new Promise<number | null>((resolve) => a.proc.once("exit", (code) => resolve(code)));
    a.proc.kill("SIGTERM");
    // The signal reaches a's event loop when it next turns: its log line says it has.
    await waitFor(() => a.output().includes("SIGTERM received"), { timeoutMs: 2_000, what: "a to take the SIGTERM" });
    await until([b.mcpUrl], quick, () => true, 5_000, "any state"); // the store still answers meanwhile
    const ready = await fetch(`${a.url}/readyz`);
    expect(ready.status).toBe(503);
    const refused = await modern(a.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 1 } }, { capabilities: WITH_TASKS });
    expect(refused).toMatchObject({ status: 503, body: { error: { code: -32603, message: "taskgate is shutting down" } } });
    const init = await fetch(a.mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    expect(init.status).toBe(503);
    // Tasks are still served while draining.
    expect((await getTask(a.mcpUrl, stuck)).body.result.status).toBe("working");
    expect(await exited).toBe(0);
    expect(await ended([b.mcpUrl], quick)).toMatchObject({ status: "completed", result: { content: [{ text: "Slept 1 s" }] } });
    const failed = await ended([b.mcpUrl], stuck);
    expect(failed).toMatchObject({ status: "failed", error: { code: -32603 }, statusMessage: expect.stringMatching(/shut down before it finished/) });
  });

  it("hands a call that is safe to repeat to a live replica instead of failing it", async () => {
    gateways = await startReplicas(2, inject("redisUrl"), { drainMs: 200, maxAttempts: 3 });
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const id = await startTask(a.mcpUrl, "sleep", { seconds: 2 });
    await a.stop("SIGTERM");
    expect(a.proc.exitCode).toBe(0);
    const rerun = await until([b.mcpUrl], id, (t) => /attempt 2 of 3/.test(t.statusMessage ?? ""), REAPED_WITHIN_MS, "a second attempt");
    expect(rerun.status).toBe("working");
    expect(await ended([b.mcpUrl], id)).toMatchObject({ status: "completed", result: { content: [{ text: "Slept 2 s" }] } });
  });
});
