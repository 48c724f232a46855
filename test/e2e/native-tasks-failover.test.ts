import { randomBytes } from "node:crypto";
import { afterEach, beforeAll, afterAll, describe, expect, inject, it } from "vitest";
import { nativeLog, nextLogged } from "../helpers/native.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { messagesOf, openSession, post } from "../helpers/raw.js";
import { FAST_TASKS, startTask, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/** From SIGKILL to another replica following the upstream task: the lease runs out, then a sweep (and slack). */
const RESUMED_WITHIN_MS = FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 5_000;

describe("a replica that dies while it follows an upstream's own task", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    demo = await startDemoHttp(["--native-tasks"]);
  });
  afterAll(async () => demo?.stop());
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  async function replicas(n: number): Promise<GatewayProcess[]> {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = { store, tasks: FAST_TASKS, upstreams: [{ name: "native", path: "/mcp", http: { url: demo.mcpUrl } }] };
    gateways = await Promise.all(Array.from({ length: n }, () => startGateway(config)));
    return gateways;
  }

  it("is followed to its end by another replica: the upstream's result, and the tool run once (the tasks extension)", async () => {
    const [a, b] = (await replicas(2)) as [GatewayProcess, GatewayProcess];
    const started = nativeLog(demo, "started", "crunch");
    const completed = nativeLog(demo, "completed");
    const taskId = await startTask(a.mcpUrl, "crunch", { ms: 6_000, steps: 30 });
    await nextLogged(demo, "started", started, "crunch");
    await until([a.mcpUrl], taskId, (t) => /Step \d+\/30/.test(t.statusMessage ?? ""), 10_000, "the upstream's statusMessage");
    await a.stop("SIGKILL");
    // Another replica follows the same upstream task: its statusMessage moves on, then it completes.
    const moving = await until(
      [b.mcpUrl],
      taskId,
      (t) => /Step \d+\/30/.test(t.statusMessage ?? "") && t.status === "working",
      RESUMED_WITHIN_MS,
      "the statusMessage followed by b",
    );
    expect(moving.status).toBe("working");
    const done = await until([b.mcpUrl], taskId, (t) => t.status !== "working" && t.status !== "input_required", 20_000, "completed");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "crunched in 30 steps" }] } });
    expect(nativeLog(demo, "started", "crunch").length).toBe(started.length + 1);
    expect(nativeLog(demo, "completed").length).toBe(completed.length + 1);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(metrics).toMatch(/taskgate_reaper_actions_total\{action="resumed"\} 1/);
  });

  it("answers a 2025-11-25 client's tasks/result on a live replica with the upstream's result (the 2025-11-25 tasks)", async () => {
    const [a, b] = (await replicas(2)) as [GatewayProcess, GatewayProcess];
    const session = await openSession(a.mcpUrl, {}, "2025-11-25");
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const rpc = async (url: string, method: string, params: Record<string, unknown>) =>
      (await messagesOf(await post(url, { jsonrpc: "2.0", id: method, method, params }, headers))).find((m) => m.id === method);
    const started = nativeLog(demo, "started", "crunch");
    const created = await rpc(a.mcpUrl, "tools/call", { name: "crunch", arguments: { ms: 5_000, steps: 25 }, task: {} });
    const taskId = created.result.task.taskId as string;
    await nextLogged(demo, "started", started, "crunch");
    // Killed once it follows the upstream task (its statusMessage is the upstream's).
    await waitFor(async () => /Step \d+\/25/.test((await rpc(a.mcpUrl, "tasks/get", { taskId })).result.statusMessage ?? ""), {
      what: "the upstream's statusMessage",
    });
    await a.stop("SIGKILL");
    const result = await rpc(b.mcpUrl, "tasks/result", { taskId });
    expect(result.result).toMatchObject({
      content: [{ type: "text", text: "crunched in 25 steps" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId } },
    });
    expect(nativeLog(demo, "started", "crunch").length).toBe(started.length + 1);
  });

  it("hands the upstream tasks it follows to another replica at SIGTERM, and leaves their upstream session open", async () => {
    const [a, b] = (await replicas(2)) as [GatewayProcess, GatewayProcess];
    const started = nativeLog(demo, "started", "crunch");
    const taskId = await startTask(a.mcpUrl, "crunch", { ms: 4_000, steps: 20 });
    await until([a.mcpUrl], taskId, (t) => /Step \d+\/20/.test(t.statusMessage ?? ""), 10_000, "the upstream's statusMessage");
    await a.stop("SIGTERM");
    expect(a.proc.exitCode).toBe(0);
    const done = await until([b.mcpUrl], taskId, (t) => t.status !== "working" && t.status !== "input_required", RESUMED_WITHIN_MS + 5_000, "an end");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "crunched in 20 steps" }] } });
    expect(nativeLog(demo, "started", "crunch").length).toBe(started.length + 1);
  });
});
