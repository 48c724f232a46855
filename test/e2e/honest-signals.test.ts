import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { uniquePrefix } from "../helpers/redis.js";
import { TERMINAL, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/** Tasks run in waves of WAVE at once, so calls keep ending while renewals run. */
const TASKS = 1500;
const WAVE = 100;
/**
 * Renewed every third of it (500 ms): often enough that renewals keep meeting calls that are just ending,
 * long enough that a loaded machine's pause does not cost a real lease (1 s to spare).
 */
const LEASE_MS = 1500;
const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };

/** Issue 17: what an operator alerts on and what a client reads must be true. */
describe("honest signals on a real gateway over Redis", () => {
  let gw: GatewayProcess;

  beforeAll(async () => {
    gw = await startGateway({
      log: { level: "warn" },
      store: { redisUrl: inject("redisUrl"), keyPrefix: uniquePrefix() },
      tasks: { leaseMs: LEASE_MS, reaperIntervalMs: 60_000, pollIntervalMs: 50 },
      upstreams: [
        {
          name: "demo",
          path: "/mcp",
          stdio: demoStdio(),
          tools: { echo: { taskSupport: "required" }, deploy: { taskSupport: "required" }, sleep: { taskSupport: "required" } },
        },
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const start = async (name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS) => {
    const { body } = await modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities });
    const taskId = body?.result?.taskId;
    if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(body)}`);
    return taskId;
  };
  const ended = (taskId: string) => until([gw.mcpUrl], taskId, (t) => TERMINAL.includes(t.status), 20_000, "its end");

  // Renewals of the replica's lease run while calls end and write their outcomes: the lease
  // holds, so no call counts a loss. A real loss stays counted: test/e2e/owner-cut-off.test.ts,
  // test/e2e/lease-fencing.test.ts.
  it("counts no lease lost when calls end right as their leases are renewed, many times", async () => {
    let renewals = 0;
    for (let done = 0; done < TASKS; done += WAVE) {
      const wave = await Promise.all(Array.from({ length: WAVE }, (_, i) => start("echo", { text: `t${done + i}` }).then(ended)));
      for (const task of wave) expect(task.status).toBe("completed");
      renewals = sample(await scrape(gw.url), "taskgate_lease_renewals_total") ?? 0;
    }
    // Renewals did run while calls were ending (else this shows nothing).
    expect(renewals).toBeGreaterThan(0);
    await waitFor(async () => sample(await scrape(gw.url), "taskgate_tasks_in_flight") === 0, { what: "no call in flight" });
    expect(sample(await scrape(gw.url), "taskgate_lease_losses_total")).toBe(0);
    expect(gw.output()).not.toMatch(/lease lost/);
  }, 120_000);

  it("ends the demo deploy of 2 s with its last progress, not a throttled earlier one", async () => {
    const taskId = await start("deploy", { service: "web", seconds: 2 }, ELICIT);
    const asked = await until([gw.mcpUrl], taskId, (t) => t.status === "input_required", 10_000, "input_required");
    const [key] = Object.keys(asked.inputRequests);
    await modern(
      gw.mcpUrl,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { confirm: true } } } },
      { capabilities: WITH_TASKS },
    );
    const done = await ended(taskId);
    expect(done).toMatchObject({ status: "completed", statusMessage: expect.stringMatching(/^Slept 2\/2 s/), result: { content: [{ text: "Deployed web" }] } });
  });

  it("ends every task with the last progress its upstream sent, however quickly it came", async () => {
    // Progress every 30 ms, well inside the 250 ms status write interval: most are held back.
    const ids = await Promise.all(Array.from({ length: 5 }, () => start("sleep", { seconds: 0.5, progressIntervalMs: 30 })));
    for (const id of ids) expect(await ended(id)).toMatchObject({ status: "completed", statusMessage: expect.stringMatching(/^Slept 0.5\/0.5 s/) });
  });

  it("leaves an ended task without a statusMessage when the upstream sent no progress", async () => {
    const done = await ended(await start("echo", { text: "quiet" }));
    expect(done.status).toBe("completed");
    expect(done.statusMessage).toBeUndefined();
  });
});
