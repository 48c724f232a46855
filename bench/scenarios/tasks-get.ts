import { measure, round, type LoadSpec } from "../lib/load.js";
import { modernRequest, WITH_TASKS } from "../lib/mcp.js";
import { commandDelta } from "../lib/redis.js";
import type { BenchContext, Scenario } from "../lib/result.js";
import { demoStdio, startGateway, startHono, type Server } from "../lib/servers.js";
import { createTask, untilEnded } from "../lib/tasks.js";
import { sleep } from "../lib/wait.js";
import { ratio, times } from "./compare.js";

/**
 * b. Polling a completed task, the hottest path of a tasks client, against the cheapest thing the
 * same stack can answer. Redis commands per poll come from INFO commandstats around the measured
 * run, so they count what taskgate sent, not what it meant to send.
 */
export const tasksGet: Scenario = {
  id: "b",
  title: "tasks/get on a completed task vs a trivial hono JSON endpoint",
  goals: {
    "tasks/get throughput": "≥ 0.5× trivial endpoint",
    "Redis commands per poll": "exactly 1",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const hono = await startHono();
      servers.push(hono);
      const gate = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-b:" },
        upstreams: [demoStdio({ echo: { taskSupport: "required" } })],
      });
      servers.push(gate);
      const taskId = await createTask(gate.url, "echo", { text: "to be polled" }, "create-b");
      const status = await untilEnded(gate.url, taskId);
      if (status !== "completed") throw new Error(`the task ended ${status}, not completed`);
      const request = modernRequest("tasks/get", taskId, { taskId }, WITH_TASKS);
      const verify = (body: string) => body.includes('"status":"completed"');
      const trivial = out.add(await measure({ label: "hono GET /json", url: `${hono.url}/json`, method: "GET", verify: (b) => b.includes('"ok":true') }, ctx.load));
      const polls = await measureWithCommands(ctx, { label: "taskgate tasks/get (completed task)", url: gate.url, request, verify });
      out.add(polls.measurement);
      const r = ratio(polls.measurement, trivial);
      out.target("tasks/get throughput", times(r), r >= 0.5);
      const perPoll = round(polls.commands.total / Math.max(1, polls.measurement.requests + polls.measurement.failures), 3);
      out.figure("Redis commands per poll", `${perPoll} (${describeCalls(polls.commands.calls, polls.measurement.requests)})`);
      out.target("Redis commands per poll", String(perPoll), Math.abs(perPoll - 1) < 0.01);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

/**
 * Warm up without counting, then count the commands Redis ran during the measured run only: the
 * polls and the commands are then of the same window.
 */
async function measureWithCommands(ctx: BenchContext, spec: LoadSpec) {
  if (ctx.load.warmupS > 0) await measure(spec, { ...ctx.load, durationS: ctx.load.warmupS, warmupS: 0 });
  const before = await ctx.redis.commandCalls();
  const measurement = await measure(spec, { ...ctx.load, warmupS: 0 });
  // Let the last requests autocannon dropped at its deadline reach Redis before counting.
  await sleep(200);
  const after = await ctx.redis.commandCalls();
  return { measurement, commands: commandDelta(before, after) };
}

function describeCalls(calls: Record<string, number>, polls: number): string {
  return Object.entries(calls)
    .map(([name, n]) => `${name} ${round(n / Math.max(1, polls), 3)}`)
    .join(", ");
}
