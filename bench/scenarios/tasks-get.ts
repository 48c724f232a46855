import { againstFloor, FLOOR_LABEL, startTasksGetFloor } from "../lib/floors.js";
import { measure, measureTogether, round, type Measurement } from "../lib/load.js";
import { LEGACY, legacyRequest, MODERN, modernRequest, openSession, rpc, WITH_TASKS } from "../lib/mcp.js";
import { probeLaunch, readProbe } from "../lib/probe-client.js";
import { commandDelta, startRedis } from "../lib/redis.js";
import type { BenchContext, Scenario } from "../lib/result.js";
import { demoStdio, startGateway, startHono, type Server } from "../lib/servers.js";
import { createTask, untilEnded } from "../lib/tasks.js";
import { sleep, waitFor } from "../lib/wait.js";
import { ratio, times } from "./compare.js";

/**
 * b. Polling a completed task, the hottest path of a tasks client, against the cheapest thing the
 * same stack can answer, and against its floor: hono + ioredis answering the same poll
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
    // The floor's own Redis: INFO commandstats of the run's Redis then counts taskgate's commands alone.
    const floorRedis = await startRedis();
    try {
      const hono = await startHono();
      servers.push(hono);
      const gate = await startGateway(
        {
          store: { redisUrl: ctx.redis.url, keyPrefix: "bench-b:" },
          upstreams: [demoStdio({ echo: { taskSupport: "required" } })],
        },
        probeLaunch(ctx.redis.url),
      );
      servers.push(gate);
      const taskId = await createTask(gate.url, "echo", { text: "to be polled" }, "create-b");
      const status = await untilEnded(gate.url, taskId);
      if (status !== "completed") throw new Error(`the task ended ${status}, not completed`);
      const legacyTask = await legacyTaskOf(gate.url);
      const floor = await startTasksGetFloor(floorRedis.url, taskId);
      servers.push(floor);
      const request = modernRequest("tasks/get", taskId, { taskId }, WITH_TASKS);
      const completed = (b: string) => b.includes('"status":"completed"');
      const trivial = out.add(
        await measure(
          { label: "hono GET /json", url: `${hono.url}/json`, method: "GET", verify: (b) => b.includes('"ok":true'), cpuPid: hono.proc.pid },
          ctx.load,
        ),
      );
      // Same routing, decoding and reply as a poll, without the store: splits the poll's cost in two.
      const discover = modernRequest("server/discover", undefined, {});
      const local = out.add(
        await measure(
          {
            label: "taskgate server/discover (answered from memory)",
            url: gate.url,
            request: discover,
            verify: (b) => b.includes('"result"'),
            cpuPid: gate.proc.pid,
          },
          ctx.load,
        ),
      );
      const modernCount = countAround(ctx, gate);
      const legacyCount = countAround(ctx, gate);
      const [floorRow, polls, legacyPolls] = await measureTogether(
        [
          { label: `${FLOOR_LABEL} hono + ioredis, one Lua script`, url: floor.url, request, verify: completed, cpuPid: floor.proc.pid },
          {
            label: `taskgate tasks/get (completed task), modern (${MODERN})`,
            url: gate.url,
            request,
            verify: completed,
            cpuPid: gate.proc.pid,
            around: modernCount.around,
          },
          {
            label: `taskgate tasks/get (completed task), legacy (${LEGACY} session)`,
            url: gate.url,
            request: legacyRequest(legacyTask.sessionId, "tasks/get", { taskId: legacyTask.taskId }),
            verify: completed,
            cpuPid: gate.proc.pid,
            around: legacyCount.around,
          },
        ],
        ctx.load,
        ctx.rounds,
      );
      out.add(floorRow!);
      for (const row of [polls!, legacyPolls!]) out.add(againstFloor(row, floorRow!));
      const r = ratio(polls!, trivial);
      out.target("tasks/get throughput", times(r), r >= 0.5);
      out.figure("server/discover vs trivial endpoint", times(ratio(local, trivial)));
      out.figure("tasks/get vs server/discover", times(ratio(polls!, local)));
      const roundTrips = perPoll(modernCount.counts.redisCommands, polls!);
      out.figure("Redis commands per poll (a script's own commands included)", describeCalls(modernCount.counts, polls!));
      out.figure("Redis socket writes per poll (concurrent polls share one)", `${perPoll(modernCount.counts.redisWrites, polls!)}`);
      out.figure(
        "legacy tasks/get: Redis round trips per poll",
        `${perPoll(legacyCount.counts.redisCommands, legacyPolls!)} (commands ${describeCalls(legacyCount.counts, legacyPolls!)})`,
      );
      out.target("Redis round trips per poll", `${roundTrips}`, Math.abs(roundTrips - 1) <= 0.05);
      const cpu = polls!.cpuUsPerRequest;
      if (cpu) out.figure("capacity: tasks/get polls per second per core of taskgate (10⁶ / CPU-µs per poll, modern)", round(1e6 / cpu, 0));
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
      await floorRedis.close();
    }
  },
};

interface Counts {
  calls: Record<string, number>;
  total: number;
  redisCommands: number;
  redisWrites: number;
}

/**
 * Counters around one row's own slices only (the rows take turns): Redis's commandstats and the
 * probe's count of commands and socket writes taskgate sent. Each slice is counted after the last
 * requests autocannon dropped at its deadline have finished.
 */
function countAround(ctx: BenchContext, server: Server): { around: () => Promise<() => Promise<void>>; counts: Counts } {
  const counts: Counts = { calls: {}, total: 0, redisCommands: 0, redisWrites: 0 };
  const around = async () => {
    const before = { calls: await ctx.redis.commandCalls(), ...(await readProbe(server.proc)) };
    return async () => {
      await sleep(200);
      const after = { calls: await ctx.redis.commandCalls(), ...(await readProbe(server.proc)) };
      const delta = commandDelta(before.calls, after.calls);
      for (const [name, n] of Object.entries(delta.calls)) counts.calls[name] = (counts.calls[name] ?? 0) + n;
      counts.total += delta.total;
      // Each command sent is one request and one reply: a poll that sends one waits one round trip.
      counts.redisCommands += after.redisCommands - before.redisCommands;
      counts.redisWrites += after.redisWrites - before.redisWrites;
    };
  };
  return { around, counts };
}

function perPoll(count: number, m: Measurement): number {
  return round(count / Math.max(1, m.requests + m.failures), 2);
}

/** A completed Dialect A task on a 2025-11-25 session, for the legacy tasks/get row. */
async function legacyTaskOf(url: string): Promise<{ sessionId: string; taskId: string }> {
  const sessionId = await openSession(url);
  const { message } = await rpc(
    url,
    legacyRequest(sessionId, "tools/call", { name: "echo", arguments: { text: "to be polled" }, task: { ttl: 3_600_000 } }, "create-b-legacy"),
  );
  const taskId = message?.result?.task?.taskId;
  if (typeof taskId !== "string") throw new Error(`a 2025-11-25 task call did not make a task: ${JSON.stringify(message).slice(0, 300)}`);
  await waitFor(async () => {
    const { message: got } = await rpc(url, legacyRequest(sessionId, "tasks/get", { taskId }, "poll-b-legacy"));
    return got?.result?.status === "completed";
  }, `legacy task ${taskId} to complete`);
  return { sessionId, taskId };
}

function describeCalls(commands: Pick<Counts, "calls" | "total">, m: Measurement): string {
  const polls = Math.max(1, m.requests + m.failures);
  const each = Object.entries(commands.calls).map(([name, n]) => `${name} ${round(n / polls, 2)}`);
  return `${round(commands.total / polls, 2)} (${each.join(", ") || "none"})`;
}
