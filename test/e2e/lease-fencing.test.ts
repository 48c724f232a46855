import { afterEach, describe, expect, inject, it } from "vitest";
import type { GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { ended, FAST_TASKS, startReplicas, startTask, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * The lease is per replica and its token fences every owner write: a replica paused past its
 * lease finds, when it runs again, that the task it held was claimed by a live replica, and the
 * store refuses what it writes for it.
 */
describe("a replica paused past its lease", () => {
  let gateways: GatewayProcess[] = [];
  afterEach(async () => {
    for (const g of gateways) g.proc.kill("SIGCONT");
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  it("cannot write over the task another replica claimed, and serves on under a new lease", async () => {
    // sleep is safe to repeat (the demo marks it idempotent): the live replica runs it again.
    gateways = await startReplicas(2, inject("redisUrl"), { maxAttempts: 2 });
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const losses = async (g: GatewayProcess) => sample(await scrape(g.url), "taskgate_lease_losses_total") ?? 0;
    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 2, progressIntervalMs: 60_000 });
    a.proc.kill("SIGSTOP");
    // Past a's lease, b's reaper claims the task and runs the call again. a's own upstream
    // process runs on meanwhile: its answer waits in the pipe for a to read it.
    const claimed = await until([b.mcpUrl], taskId, (t) => /attempt 2 of 2/.test(t.statusMessage ?? ""), FAST_TASKS.leaseMs + 10_000, "b to claim the task");
    expect(claimed.status).toBe("working");
    a.proc.kill("SIGCONT");
    // a reads its upstream's answer and tries to write it: refused (or abandoned first, when its
    // renewal was answered before); either way counted as lost, and nothing of a's is written.
    await waitFor(async () => (await losses(a)) === 1, { timeoutMs: 10_000, what: "a to count the lost lease" });
    // The log line may reach the pipe a moment after the metric is served: waited for, not read once.
    const said = /outcome refused, another replica holds the task now|the replica's lease lapsed/;
    await waitFor(() => said.test(a.output()), { timeoutMs: 5_000, what: "a to log why it lost the lease" });
    expect(a.output()).toMatch(said);
    const meanwhile = await until([b.mcpUrl], taskId, () => true);
    if (meanwhile.status !== "completed") expect(meanwhile.statusMessage).toMatch(/attempt 2 of 2/);
    // b's run ends it, once.
    const done = await ended([a.mcpUrl, b.mcpUrl], taskId, 15_000);
    expect(done.status).toBe("completed");
    const endedBy = async (g: GatewayProcess) => sample(await scrape(g.url), "taskgate_tasks_ended_total", { status: "completed" }) ?? 0;
    expect(await endedBy(a)).toBe(0);
    expect(await endedBy(b)).toBe(1);
    // a took a new lease: a task it makes now is held, renewed and completed by a.
    const fresh = await startTask(a.mcpUrl, "echo", { text: "after the pause" });
    expect((await ended([a.mcpUrl], fresh, 10_000)).status).toBe("completed");
    expect(await endedBy(a)).toBe(1);
  }, 60_000);
});
