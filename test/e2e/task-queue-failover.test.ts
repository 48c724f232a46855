import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, inject, it } from "vitest";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ended, FAST_TASKS, startTask, until } from "../helpers/replicas.js";

/** From SIGKILL to the next sweep: the lease runs out, then a sweep (plus a takeover of the reaper's lock, plus slack), then the call itself. */
const TAKEN_WITHIN_MS = FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 8_000;

/** Replicas on one Redis prefix, each with a pool of one process: a second call queues. Re-runs are off (the default). */
async function replicas(n: number): Promise<GatewayProcess[]> {
  const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
  const upstream = { name: "demo", path: "/mcp", stdio: demoStdio(), tools: { sleep: { taskSupport: "required" } }, poolSize: 1, shareQuietCalls: false };
  return Promise.all(Array.from({ length: n }, () => startGateway({ store, tasks: FAST_TASKS, upstreams: [upstream] })));
}

describe("a queued task outlives the replica it was queued on", () => {
  let gateways: GatewayProcess[] = [];
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  it("is queued again and completes on a live replica after its own is SIGKILLed, while the call that had started is not run again", async () => {
    gateways = await replicas(2);
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const running = await startTask(a.mcpUrl, "sleep", { seconds: 60, label: "running" });
    await until([a.mcpUrl], running, (t) => t.status === "working" && !/^queued/.test(t.statusMessage ?? ""), 10_000, "running");
    const queued = await startTask(a.mcpUrl, "sleep", { seconds: 0.5, label: "was-queued" });
    await until([a.mcpUrl], queued, (t) => t.statusMessage === "queued: 0 ahead", 10_000, "queued");
    await a.stop("SIGKILL");
    const done = await ended([b.mcpUrl], queued, TAKEN_WITHIN_MS);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ text: "Slept 0.5 s (was-queued)" }] } });
    // The started one is not run again (re-runs are off): it fails, saying why.
    const cut = await ended([b.mcpUrl], running, TAKEN_WITHIN_MS);
    expect(cut.status).toBe("failed");
    expect(b.output()).toContain("running the call of a stopped replica again");
    expect(b.output().split("sleep started (0.5 s)").length - 1).toBe(1);
    expect(b.output()).not.toContain("sleep started (60 s)");
  });

  it("is handed over at SIGTERM and completes on a live replica", async () => {
    gateways = await replicas(2);
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const running = await startTask(a.mcpUrl, "sleep", { seconds: 60, label: "running" });
    await until([a.mcpUrl], running, (t) => t.status === "working" && !/^queued/.test(t.statusMessage ?? ""), 10_000, "running");
    const queued = await startTask(a.mcpUrl, "sleep", { seconds: 0.5, label: "handed-over" });
    await until([a.mcpUrl], queued, (t) => t.statusMessage === "queued: 0 ahead", 10_000, "queued");
    await a.stop("SIGTERM");
    expect(a.output()).toContain("shutting down: handed over the tasks still queued");
    const done = await ended([b.mcpUrl], queued, TAKEN_WITHIN_MS);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ text: "Slept 0.5 s (handed-over)" }] } });
  });
});
