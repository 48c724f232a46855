import { round } from "../lib/load.js";
import { activityPerInterval, childPids, rssMiB, type RedisActivity } from "../lib/probe.js";
import { probeLaunch, readProbe } from "../lib/probe-client.js";
import type { BenchContext, Scenario, ScenarioOutput } from "../lib/result.js";
import { demoStdio, startGateway, type Server } from "../lib/servers.js";
import { createTask, getTask } from "../lib/tasks.js";
import { pool, sleep } from "../lib/wait.js";
import { capacity } from "./capacity.js";

const LEASE_MS = 3_000;
/** The owner renews every third of leaseMs (src/tasks/owner.ts). */
const RENEW_INTERVAL_MS = LEASE_MS / 3;
/** Longer than the scenario: what is measured per interval is lease renewal alone. */
const REAPER_INTERVAL_MS = 3_600_000;
const CREATE_CONCURRENCY = 50;
const SMALL_COUNT = 1_000;
const KEY_PREFIX = "bench-e:";

/**
 * e. Many detached calls held at once by one taskgate process: a required `sleep` of 120 s that
 * never finishes within the scenario. Measured: the process's memory, Redis memory per task record
 * (no results are written yet), and the Redis work of lease renewal at 1,000 and at the full count:
 * batched renewal should cost the same number of round trips per interval at both. The reaper is
 * held off for the scenario (REAPER_INTERVAL_MS), so its sweeps are not counted as renewal; a
 * second replica then sweeps at the default interval for the capacity model (./capacity.ts).
 */
export const inFlight: Scenario = {
  id: "e",
  title: "detached sleep tasks in flight on one taskgate process",
  goals: {
    "RSS with the tasks in flight": "≤ 250 MB",
    "heap per held call": "≤ 3 KiB",
    "Redis per task record": "≤ 2 KB",
    "lease renewal round trips per interval": "constant in the number of tasks",
  },
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      await ctx.redis.client.flushall();
      retried = 0;
      const gate = await startGateway(
        {
          store: { redisUrl: ctx.redis.url, keyPrefix: KEY_PREFIX },
          // The reaper probes every live task once per sweep (one EVALSHA each, in pages): with its
          // default 5 s interval a sweep fell inside the measured window and was counted as renewal.
          tasks: { leaseMs: LEASE_MS, defaultTtlMs: 600_000, reaperIntervalMs: REAPER_INTERVAL_MS },
          // Every caller is one principal without auth; the scenario holds more than the default allows.
          limits: { maxActiveTasksPerPrincipal: 0 },
          upstreams: [heldUpstream()],
        },
        probeLaunch(ctx.redis.url, true),
      );
      servers.push(gate);
      await sleep(500);
      const baseRedis = await usedMemory(ctx);
      const rest = await readProbe(gate.proc);
      const restRssMiB = rssMiB(gate.proc.pid);
      out.figure("taskgate at rest", `RSS ${restRssMiB} MiB, heap ${mib(rest.heapUsed)} MiB used`);
      const small = Math.min(SMALL_COUNT, ctx.inFlightTasks);
      const first = await createMany(gate.url, 0, small);
      const atSmall = await renewal(ctx, gate, small);
      await createMany(gate.url, small, ctx.inFlightTasks);
      await sleep(RENEW_INTERVAL_MS);
      const held = await memory(ctx, out, gate, { redisBytes: baseRedis, heapUsed: rest.heapUsed }, first[0]!);
      const atFull = await renewal(ctx, gate, ctx.inFlightTasks);
      leaseFigures(out, [atSmall, atFull]);
      if (retried)
        out.note(`${retried} creates answered 503 (store call past its deadline on a loaded machine) and were sent again; a task may exist for some of them`);
      const model = {
        tasks: ctx.inFlightTasks,
        restRssMiB,
        ...held,
        renewalCommands: atFull.commands,
        renewals: atFull.evalsha,
        renewIntervalMs: RENEW_INTERVAL_MS,
        leaseMs: LEASE_MS,
        keyPrefix: KEY_PREFIX,
        sampleId: first[0]!,
        url: gate.url,
      };
      await capacity(ctx, out, servers, model);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
      await ctx.redis.client.flushall().catch(() => undefined);
    }
  },
};

/**
 * The demo server over stdio, running every held call at once: `isolation: shared` on one process
 * and `maxInFlight` at its maximum. With the default pool (`poolSize` 8) the calls beyond eight
 * would wait in the upstream's queue and fail after `queueTimeoutMs`: they would not be held calls.
 */
export function heldUpstream(): Record<string, unknown> {
  return { ...demoStdio({ sleep: { taskSupport: "required" } }), isolation: "shared", maxInFlight: 10_000 };
}

/** Creates answered 503 and sent again, as a client would: on a loaded machine a store call can miss its deadline. */
let retried = 0;
const CREATE_ATTEMPTS = 3;

async function createMany(url: string, from: number, to: number): Promise<string[]> {
  const indexes = Array.from({ length: to - from }, (_, i) => from + i);
  return pool(indexes, CREATE_CONCURRENCY, async (i) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await createTask(url, "sleep", { seconds: 120, progressIntervalMs: 3_600_000 }, `e-${i}-${attempt}`);
      } catch (err) {
        if (attempt >= CREATE_ATTEMPTS || !String((err as Error).message).includes("answered 503")) throw err;
        retried++;
      }
    }
  });
}

async function usedMemory(ctx: BenchContext): Promise<number> {
  return Number((await ctx.redis.info("memory")).get("used_memory"));
}

async function memory(
  ctx: BenchContext,
  out: ScenarioOutput,
  gate: Server,
  rest: { redisBytes: number; heapUsed: number },
  sampleId: string,
): Promise<{ rssMiB: number; redisBytesPerTask: number }> {
  const n = ctx.inFlightTasks;
  const rss = rssMiB(gate.proc.pid);
  const heap = await readProbe(gate.proc);
  const upstream = childPids(gate.proc.pid).map(rssMiB);
  const perTask = round((await usedMemory(ctx)) - rest.redisBytes, 0) / n;
  const sample = await getTask(gate.url, sampleId);
  out.figure("tasks in flight", n);
  out.figure("a sampled task's status", String(sample.status));
  out.figure(`taskgate RSS with ${n} in flight`, `${rss} MiB as found, ${mib(heap.rss)} MiB after a full collection`);
  out.figure(
    `taskgate heap with ${n} in flight, after a full collection`,
    `${mib(heap.heapUsed)} MiB used of ${mib(heap.heapTotal)} MiB, ${mib(heap.external)} MiB external; ${round((heap.heapUsed - rest.heapUsed) / n / 1024, 1)} KiB of heap per call; V8 has committed ${Object.entries(
      heap.spaces,
    )
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")} MiB`,
  );
  if (upstream.length) out.figure("the stdio upstream's RSS (the demo server holding the calls)", `${upstream.join(", ")} MiB`);
  out.figure("Redis used_memory per task", `${round(perTask, 0)} bytes`);
  out.target("RSS with the tasks in flight", `${rss} MiB = ${round(rss * 1.048576, 1)} MB`, rss * 1.048576 <= 250);
  const perCall = (heap.heapUsed - rest.heapUsed) / n / 1024;
  out.target("heap per held call", `${round(perCall, 1)} KiB (heap used after a full collection, over rest)`, perCall <= 3);
  out.target("Redis per task record", `${round(perTask / 1024, 2)} KB`, perTask <= 2048);
  return { rssMiB: rss, redisBytesPerTask: perTask };
}

/** Windows of three renewal intervals measured at each count; the quietest one is renewal alone. */
const WINDOWS = 3;

/**
 * Work of another cadence falls in some windows and not others (the store-format watch reads the
 * store every 2 × leaseMs, src/store/format-check.ts): the window with the fewest round trips is
 * kept. Renewal itself runs in every interval, so a cost that grows with the tasks shows in each.
 */
async function renewal(ctx: BenchContext, gate: Server, tasks: number): Promise<Renewal> {
  let quietest: RedisActivity | undefined;
  for (let i = 0; i < WINDOWS; i++) {
    const window = await activityPerInterval(ctx.redis, gate.proc, RENEW_INTERVAL_MS, 3);
    if (!quietest || window.roundTrips < quietest.roundTrips) quietest = window;
  }
  return { tasks, ...quietest! };
}

type Renewal = RedisActivity & { tasks: number };

function mib(bytes: number): number {
  return round(bytes / 1024 / 1024, 1);
}

function leaseFigures(out: ScenarioOutput, runs: [Renewal, Renewal]): void {
  for (const r of runs)
    out.figure(
      `per renewal interval (${RENEW_INTERVAL_MS} ms) with ${r.tasks} tasks, the quietest of ${WINDOWS} windows of 3`,
      `${r.roundTrips} Redis round trips; Redis ran ${r.evalsha} EVALSHA, ${r.commands} commands in all, in ${r.reads} socket reads (${
        Object.entries(r.calls)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ") || "nothing"
      })`,
    );
  const [small, full] = runs;
  const constant = full.roundTrips > 0 && full.roundTrips <= small.roundTrips + 0.5;
  out.target(
    "lease renewal round trips per interval",
    `${small.roundTrips} → ${full.roundTrips} per interval (${small.tasks} → ${full.tasks} tasks)`,
    constant,
  );
}
