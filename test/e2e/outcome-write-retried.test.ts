import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { demoStdio, startGateway } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { startRedis } from "../helpers/redis.js";
import { ended, startTask } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

const TOOLS = { sleep: { taskSupport: "required" } };

/**
 * An outcome write whose reply misses the store's deadline is tried again; the first try may
 * still be applied (Redis runs what it was sent, the deadline is only the caller's). The owner
 * must then count and audit the task's end as its own, not drop it as "already terminal" (at the
 * end of a wave of scenario r thousands of tasks ended that way, uncounted).
 */
describe("an outcome write tried again after its first try was applied late", () => {
  const { defer } = useCleanups();

  it("counts the task as ended once, with its own result", async () => {
    // A Redis of its own: CLIENT PAUSE holds every client's writes.
    const redis = await startRedis();
    defer(() => redis.stop());
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    defer(() => void admin.disconnect());
    // A long lease: renewals held by the pause must not cost it.
    const config = {
      store: { redisUrl: redis.url, keyPrefix: "retried:" },
      tasks: { leaseMs: 60_000 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: TOOLS }],
    };
    const gate = await startGateway(config);
    defer(() => gate.stop());
    const metric = async (name: string, labels: Record<string, string> = {}) => sample(await scrape(gate.url), name, labels) ?? 0;

    const taskId = await startTask(gate.mcpUrl, "sleep", { seconds: 1 });
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    defer(() => void admin.call("CLIENT", "UNPAUSE").catch(() => undefined));
    // The upstream answered, and the outcome write (a batch of one) has missed its deadline at least once.
    await waitFor(
      async () =>
        (await metric("taskgate_upstream_call_duration_seconds_count")) === 1 &&
        (await metric("taskgate_store_errors_total", { operation: "transitionTasks" })) >= 1,
      {
        timeoutMs: 20_000,
        what: "the outcome write to time out while Redis holds writes",
      },
    );
    await admin.call("CLIENT", "UNPAUSE");
    await waitFor(async () => (await metric("taskgate_tasks_in_flight")) === 0, { timeoutMs: 20_000, what: "the owner to let go of the call" });

    const task = await ended([gate.mcpUrl], taskId, 10_000);
    expect(task).toMatchObject({ status: "completed" });
    expect(await metric("taskgate_tasks_ended_total", { status: "completed" })).toBe(1);
    expect(gate.output()).toMatch(/"status":"completed"[^\n]*"task ended"|"task ended"[^\n]*"status":"completed"/);
  });
});
