import { describe, expect, inject, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";
import { uniquePrefix } from "../helpers/redis.js";
import { ended, FAST_TASKS, startTask, until } from "../helpers/replicas.js";
import { startTcpForwarder, type TcpForwarder } from "../helpers/tcp-forwarder.js";
import { waitFor } from "../helpers/wait-for.js";

const TOOLS = { sleep: { taskSupport: "required" } };

/**
 * The owner side of a lease: a replica that keeps running but can no longer reach Redis must not
 * go on as if it still owned its calls (another replica may have taken them over). It stops
 * writing, cancels the upstream call, and the reaper of a replica that sees Redis tells the truth.
 */
describe("a replica cut off from Redis while it keeps running", () => {
  const { defer } = useCleanups();

  it("abandons its call after leaseMs without a renewal, cancels it upstream, and the live replica's reaper fails the task", async () => {
    const redisPort = Number(new URL(inject("redisUrl")).port);
    const forwarder: TcpForwarder = await startTcpForwarder(redisPort);
    defer(() => forwarder.close());
    const demo: RunningProcess & { mcpUrl: string } = await startDemoHttp();
    defer(() => demo.stop());
    const proxy = await startRecordingProxy(demo.mcpUrl);
    defer(() => proxy.close());
    const keyPrefix = uniquePrefix();
    const upstreams = [{ name: "demo", path: "/mcp", http: { url: proxy.mcpUrl }, tools: TOOLS }];
    const start = (redisUrl: string) => startGateway({ store: { redisUrl, keyPrefix }, tasks: FAST_TASKS, upstreams });
    const [a, b] = (await Promise.all([start(`redis://127.0.0.1:${forwarder.port}`), start(inject("redisUrl"))])) as [GatewayProcess, GatewayProcess];
    defer(
      () => a.stop("SIGKILL"),
      () => b.stop("SIGKILL"),
    );

    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 8, progressIntervalMs: 200 });
    await until([b.mcpUrl], taskId, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress written by its owner");
    const cancelsBefore = proxy.seen.filter((r) => r.method === "notifications/cancelled").length;

    forwarder.cut();
    // No renewal for leaseMs: a abandons the call and says so to the upstream.
    await waitFor(() => proxy.seen.filter((r) => r.method === "notifications/cancelled").length > cancelsBefore, {
      timeoutMs: FAST_TASKS.leaseMs + 5_000,
      what: "the cut-off owner to cancel its upstream call",
    });
    const failed = await ended([b.mcpUrl], taskId, FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 5_000);
    expect(failed).toMatchObject({ status: "failed", error: { code: -32603 } });
    expect(failed.statusMessage).toMatch(/replica running this call stopped/);

    // Back on Redis, a counts the loss and writes nothing over what the reaper said.
    forwarder.restore();
    await waitFor(async () => sample(await scrape(a.url), "taskgate_lease_losses_total") === 1, { timeoutMs: 10_000, what: "a's lease loss counted" });
    expect(a.output()).toMatch(/lease lost: abandoning the local upstream call/);
    const after = await until([a.mcpUrl, b.mcpUrl], taskId, () => true, 10_000, "a readable task on both replicas");
    expect(after).toMatchObject({ status: "failed", statusMessage: failed.statusMessage });
  });
});
