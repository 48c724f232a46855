import { againstFloor, FLOOR_LABEL, startTasksGetFloor } from "../lib/floors.js";
import { measure, round, type LoadSpec, type Measurement } from "../lib/load.js";
import { LEGACY, legacyRequest, modernRequest, openSession, rpc, WITH_TASKS } from "../lib/mcp.js";
import { probeLaunch, readProbe } from "../lib/probe-client.js";
import { commandDelta } from "../lib/redis.js";
import type { BenchContext, Scenario } from "../lib/result.js";
import { demoStdio, startGateway, startHono, type Server } from "../lib/servers.js";
import { createTask, untilEnded } from "../lib/tasks.js";
import { sleep, waitFor } from "../lib/wait.js";
import { ratio, times } from "./compare.js";

/**
 * b. Polling a completed task, the hottest path of a tasks client, against the cheapest thing the
 * same stack can answer, and against its floor (issue 16): hono + ioredis answering the same poll
 * from one Lua script. Both wires: a 2026-07-28 poll and a 2025-11-25 session's. Redis round trips per poll are counted inside taskgate by the bench's
 * probe (commands the Redis client sent: each one request and one reply; concurrent polls share
 * socket writes, counted apart); INFO commandstats around the same window says which commands
 * ran, a script's own included.
 */
export const tasksGet: Scenario = {
  id: "b",
  title: "tasks/get on a completed task vs its floor and a trivial hono JSON endpoint",
  goals: {
    "tasks/get throughput": "≥ 0.5× trivial endpoint",
    "Redis round trips per poll": "exactly 1",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const hono = await startHono();
      servers.push(hono);
      const gate = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-b:" },
        upstreams: [demoStdio({ echo: { taskSupport: "required" } })],
      }, probeLaunch(ctx.redis.url));
      servers.push(gate);
      const taskId = await createTask(gate.url, "echo", { text: "to be polled" }, "create-b");
      const status = await untilEnded(gate.url, taskId);
      if (status !== "completed") throw new Error(`the task ended ${status}, not completed`);
      const legacyTask = await legacyTaskOf(gate.url);
      const floor = await startTasksGetFloor(ctx.redis.url, taskId);
      servers.push(floor);
      const request = modernRequest("tasks/get", taskId, { taskId }, WITH_TASKS);
      const completed = (b: string) => b.includes('"status":"completed"');
      const trivial = out.add(await measure({ label: "hono GET /json", url: `${hono.url}/json`, method: "GET", verify: (b) => b.includes('"ok":true'), cpuPid: hono.proc.pid }, ctx.load));
      const floorRow = out.add(await measure({ label: `${FLOOR_LABEL} hono + ioredis, one Lua script`, url: floor.url, request, verify: completed, cpuPid: floor.proc.pid }, ctx.load));
      // Same routing, decoding and reply as a poll, without the store: splits the poll's cost in two.
      const discover = modernRequest("server/discover", undefined, {});
      const local = out.add(await measure({ label: "taskgate server/discover (answered from memory)", url: gate.url, request: discover, verify: (b) => b.includes('"result"'), cpuPid: gate.proc.pid }, ctx.load));
      const polls = await counted(ctx, gate, { label: "taskgate tasks/get (completed task), modern", url: gate.url, request, verify: completed, cpuPid: gate.proc.pid });
      out.add(againstFloor(polls.measurement, floorRow));
      const legacyPolls = await counted(ctx, gate, { label: `taskgate tasks/get (completed task), legacy (${LEGACY} session)`, url: gate.url, request: legacyRequest(legacyTask.sessionId, "tasks/get", { taskId: legacyTask.taskId }), verify: completed, cpuPid: gate.proc.pid });
      out.add(againstFloor(legacyPolls.measurement, floorRow));
      const r = ratio(polls.measurement, trivial);
      out.target("tasks/get throughput", times(r), r >= 0.5);
      out.figure("server/discover vs trivial endpoint", times(ratio(local, trivial)));
      out.figure("tasks/get vs server/discover", times(ratio(polls.measurement, local)));
      const roundTrips = polls.roundTripsPerPoll;
      out.figure("Redis commands per poll (a script's own commands included)", describeCalls(polls.commands, polls.measurement));
      out.figure("Redis socket writes per poll (concurrent polls share one)", `${polls.writesPerPoll}`);
      out.figure("legacy tasks/get: Redis round trips per poll", `${legacyPolls.roundTripsPerPoll} (commands ${describeCalls(legacyPolls.commands, legacyPolls.measurement)})`);
      out.target("Redis round trips per poll", `${roundTrips}`, Math.abs(roundTrips - 1) <= 0.05);
      const cpu = polls.measurement.cpuUsPerRequest;
      if (cpu) out.figure("capacity: tasks/get polls per second per core of taskgate (10⁶ / CPU-µs per poll, modern)", round(1e6 / cpu, 0));
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

/** A completed Dialect A task on a 2025-11-25 session, for the legacy tasks/get row. */
async function legacyTaskOf(url: string): Promise<{ sessionId: string; taskId: string }> {
  const sessionId = await openSession(url);
  const { message } = await rpc(url, legacyRequest(sessionId, "tools/call", { name: "echo", arguments: { text: "to be polled" }, task: { ttl: 3_600_000 } }, "create-b-legacy"));
  const taskId = message?.result?.task?.taskId;
  if (typeof taskId !== "string") throw new Error(`a 2025-11-25 task call did not make a task: ${JSON.stringify(message).slice(0, 300)}`);
  await waitFor(async () => {
    const { message: got } = await rpc(url, legacyRequest(sessionId, "tasks/get", { taskId }, "poll-b-legacy"));
    return got?.result?.status === "completed";
  }, `legacy task ${taskId} to complete`);
  return { sessionId, taskId };
}

/**
 * Warm up without counting, then count over the measured run only, so requests, commands and
 * write calls are of one window.
 */
async function counted(ctx: BenchContext, server: Server, spec: LoadSpec) {
  if (ctx.load.warmupS > 0) await measure(spec, { ...ctx.load, durationS: ctx.load.warmupS, warmupS: 0 });
  const before = { calls: await ctx.redis.commandCalls(), ...(await readProbe(server.proc)) };
  const measurement = await measure(spec, { ...ctx.load, warmupS: 0 });
  // Let the last requests autocannon dropped at its deadline finish before counting.
  await sleep(200);
  const after = { calls: await ctx.redis.commandCalls(), ...(await readProbe(server.proc)) };
  const answered = Math.max(1, measurement.requests + measurement.failures);
  return {
    measurement,
    commands: commandDelta(before.calls, after.calls),
    // Each command sent is one request and one reply: a poll that sends one waits one round trip.
    roundTripsPerPoll: round((after.redisCommands - before.redisCommands) / answered, 2),
    writesPerPoll: round((after.redisWrites - before.redisWrites) / answered, 2),
  };
}

function describeCalls(commands: ReturnType<typeof commandDelta>, m: Measurement): string {
  const polls = Math.max(1, m.requests + m.failures);
  const each = Object.entries(commands.calls).map(([name, n]) => `${name} ${round(n / polls, 2)}`);
  return `${round(commands.total / polls, 2)} (${each.join(", ") || "none"})`;
}
