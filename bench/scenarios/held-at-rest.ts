import { createHeld, heldUpstreams, upstreamUrl } from "../lib/held.js";
import { round } from "../lib/load.js";
import { byLabel, gauge, grown, metricsOf } from "../lib/metrics.js";
import { probeLaunch, readProbe } from "../lib/probe-client.js";
import { childPids, rssMiB } from "../lib/probe.js";
import { commandDelta } from "../lib/redis.js";
import type { BenchContext, Scenario, ScenarioOutput } from "../lib/result.js";
import { startGateway, type Server } from "../lib/servers.js";
import { getTask } from "../lib/tasks.js";
import { pool, sleep, waitFor } from "../lib/wait.js";
import { heldUpstream } from "./in-flight.js";

/** The defaults (src/config/schema.ts): tasks.leaseMs 15 s, tasks.reaperIntervalMs 5 s. */
const DEFAULT_LEASE_MS = 15_000;
const DEFAULT_REAPER_INTERVAL_MS = 5_000;
/** One lease period and one reaper sweep: every lease is renewed and every sweep runs in it. */
const WINDOW_MS = DEFAULT_LEASE_MS + DEFAULT_REAPER_INTERVAL_MS;
/** After the last create: its own writes (the task's status, the upstream's answer to start) are done. */
const SETTLE_MS = 2_000;
const CREATE_CONCURRENCY = 50;
/**
 * Every call ends after the last step's window, at a time fixed before the first create: the
 * creates are planned at no faster than PLANNED_CREATES_PER_S, and the ends spread over
 * END_SPREAD_S so that ending is not a burst (scenario o measures bursts).
 */
const PLANNED_CREATES_PER_S = 150;
const END_SPREAD_S = 30;
const END_MARGIN_MS = 20_000;
const KEY_PREFIX = "bench-h:";

/**
 * h. (opt-in: `BENCH_ONLY=h`, minutes at the full count) What held detached calls cost Redis at
 * rest, as an operator runs taskgate: one replica, every task setting at its default (lease and
 * reaper included), holding BENCH_HELD calls in steps (300, 3,000, 30,000): at each step, with no
 * creates and no polls running, the Redis commands a second over one lease period plus one reaper
 * sweep, from INFO commandstats. Held calls should cost Redis about nothing at rest: the figure
 * at the most held over the figure at the fewest stays flat. Also taskgate's memory at the most
 * held, leases lost and store errors; then every call ends (at a time set before the first
 * create, after the last window) and each is read back for its own result.
 */
export const heldAtRest: Scenario = {
  id: "h",
  title: "Redis commands at rest while detached calls are held, one replica at the default lease and reaper",
  optIn: true,
  goals: {
    "Redis commands a second at rest, most held over fewest held": "≤ 1.5× (flat in the calls held)",
    "taskgate RSS at the most held": "≤ 400 MB",
    "leases lost while held": "none",
    "store errors while held": "none",
    "every held call ended with its own result": "all completed, each with the result of its own call",
  },
  async run(ctx, out) {
    const levels = ctx.heldLevels;
    const most = levels[levels.length - 1]!;
    let gate: Server | undefined;
    try {
      await ctx.redis.client.flushall();
      gate = await startGateway(
        {
          store: { redisUrl: ctx.redis.url, keyPrefix: KEY_PREFIX },
          // Every caller is one principal without auth; the default limit would refuse past it.
          limits: { maxActiveTasksPerPrincipal: 0 },
          upstreams: heldUpstreams(most, heldUpstream()),
        },
        probeLaunch(ctx.redis.url, true),
      );
      const g = gate;
      out.figure(
        "settings",
        `tasks.leaseMs ${DEFAULT_LEASE_MS}, tasks.reaperIntervalMs ${DEFAULT_REAPER_INTERVAL_MS} (defaults); window ${WINDOW_MS / 1000} s per step`,
      );
      const upstreams = heldUpstreams(most, heldUpstream()).length;
      out.figure(
        "upstreams",
        `${upstreams} shared demo server${upstreams > 1 ? "s" : ""} over stdio (maxInFlight 10,000 each), the calls round-robin over them`,
      );
      const startMetrics = await metricsOf(g);
      const idle = await atRest(ctx, g, 0);
      out.figure("at rest with nothing held", idle.text);
      const steps: Step[] = [];
      let made = 0;
      const plannedMs = levels.reduce((ms, level, i) => ms + ((level - (levels[i - 1] ?? 0)) / PLANNED_CREATES_PER_S) * 1000 + SETTLE_MS + WINDOW_MS, 0);
      const endAt = Date.now() + plannedMs + END_MARGIN_MS;
      const seconds = new Map<number, number>();
      const ids = new Map<number, string>();
      for (const level of levels) {
        const started = Date.now();
        const { retried, ids: created } = await createHeld(
          (n) => upstreamUrl(g, most, n),
          made,
          level,
          (n) => {
            // Asked again for a try sent again: the same end.
            const s = Math.max(0.1, Math.round((endAt + (n % END_SPREAD_S) * 1000 - Date.now()) / 100) / 10);
            seconds.set(n, s);
            return { seconds: s, progressIntervalMs: 3_600_000, label: `h-${n}` };
          },
          CREATE_CONCURRENCY,
        );
        for (const [n, id] of created) ids.set(n, id);
        const createdS = (Date.now() - started) / 1000;
        out.figure(
          `${level} held: created`,
          `${level - made} calls in ${round(createdS, 1)} s (${round((level - made) / createdS, 0)} a second)${retried ? `; ${retried} creates answered 503 or dropped and sent again` : ""}`,
        );
        made = level;
        await sleep(SETTLE_MS);
        const step = await atRest(ctx, g, level);
        steps.push(step);
        out.figure(`${level} held: at rest`, step.text);
      }
      await memory(out, g, most);
      const end = await metricsOf(g);
      verdicts(out, steps, startMetrics, end);
      await endedRight(out, g, ids, seconds, endAt);
    } finally {
      await gate?.proc.stop();
      await ctx.redis.client.flushall().catch(() => undefined);
    }
  },
};

interface Step {
  level: number;
  perS: number;
  text: string;
  /** taskgate_tasks_in_flight before and after the window. */
  heldBefore: number;
  heldAfter: number;
}

/** Redis commands a second over WINDOW_MS with nothing but held calls, total and by command. */
async function atRest(ctx: BenchContext, gate: Server, level: number): Promise<Step> {
  const heldBefore = gauge(await metricsOf(gate), "taskgate_tasks_in_flight");
  const writesBefore = (await readProbe(gate.proc)).redisWrites;
  const before = await ctx.redis.commandCalls();
  const started = Date.now();
  await sleep(WINDOW_MS);
  const after = await ctx.redis.commandCalls();
  const windowS = (Date.now() - started) / 1000;
  const writes = (await readProbe(gate.proc)).redisWrites - writesBefore;
  const metrics = await metricsOf(gate);
  const heldAfter = gauge(metrics, "taskgate_tasks_in_flight");
  const lost = gauge(metrics, "taskgate_lease_losses_total");
  const { total, calls } = commandDelta(before, after);
  const perS = total / windowS;
  const byName = Object.entries(calls)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${round(v / windowS, 1)}`)
    .join(", ");
  const text = `${round(perS, 1)} Redis commands a second over ${round(windowS, 1)} s (${byName || "none"}); ${round(writes / windowS, 1)} round trips a second from taskgate; ${heldBefore} → ${heldAfter} held; ${lost} leases lost so far`;
  return { level, perS, text, heldBefore, heldAfter };
}

async function memory(out: ScenarioOutput, gate: Server, most: number): Promise<void> {
  const rss = rssMiB(gate.proc.pid);
  const probe = await readProbe(gate.proc);
  const upstream = childPids(gate.proc.pid).map(rssMiB);
  out.figure(
    `${most} held: taskgate memory`,
    `RSS ${rss} MiB as found, ${mib(probe.rss)} MiB after a full collection; heap ${mib(probe.heapUsed)} MiB used of ${mib(probe.heapTotal)} MiB`,
  );
  out.figure(`${most} held: the stdio upstreams' RSS`, `${upstream.join(", ")} MiB`);
  const held = gauge(await metricsOf(gate), "taskgate_tasks_in_flight");
  const what = held === most ? `${most} held` : `${most} created, ${held} still held`;
  out.target("taskgate RSS at the most held", `${rss} MiB = ${round(rss * 1.048576, 1)} MB with ${what}`, rss * 1.048576 <= 400);
}

function verdicts(out: ScenarioOutput, steps: Step[], start: string, end: string): void {
  const fewest = steps[0]!;
  const most = steps[steps.length - 1]!;
  const ratio = most.perS / fewest.perS;
  out.target(
    "Redis commands a second at rest, most held over fewest held",
    `${round(ratio, 2)}× (${round(most.perS, 1)} a second with ${heldText(most)}, ${round(fewest.perS, 1)} with ${heldText(fewest)})`,
    ratio <= 1.5,
  );
  const lost = gauge(end, "taskgate_lease_losses_total") - gauge(start, "taskgate_lease_losses_total");
  out.target("leases lost while held", `${lost} (taskgate_lease_losses_total)`, lost === 0);
  const errors = grown(byLabel(start, "taskgate_store_errors_total", "operation"), byLabel(end, "taskgate_store_errors_total", "operation"));
  out.target("store errors while held", `${errors.text} (taskgate_store_errors_total by operation)`, errors.total === 0);
  const reaped = grown(byLabel(start, "taskgate_reaper_actions_total", "action"), byLabel(end, "taskgate_reaper_actions_total", "action"));
  out.figure("reaper actions while held", reaped.text);
  // A create's first try that made a task anyway holds one more; a call that ended, one fewer.
  const off = steps.filter((s) => s.heldBefore !== s.level || s.heldAfter !== s.level);
  if (off.length) out.note(`the in-flight gauge did not match the calls created: ${off.map((s) => `${s.level}: ${s.heldBefore} → ${s.heldAfter}`).join("; ")}`);
}

/** "30000 held", or what was still held when leases were lost and tasks reaped. */
function heldText(s: Step): string {
  return s.heldAfter === s.level ? `${s.level} held` : `${s.level} created, ${s.heldAfter} still held`;
}

function mib(bytes: number): number {
  return round(bytes / 1024 / 1024, 1);
}

/** After their planned end: every call read back through tasks/get, completed with its own result. */
async function endedRight(out: ScenarioOutput, gate: Server, ids: Map<number, string>, seconds: Map<number, number>, endAt: number): Promise<void> {
  const lastEnd = endAt + END_SPREAD_S * 1000;
  out.figure("calls end", `${round((endAt - Date.now()) / 1000, 0)} s after the last window, spread over ${END_SPREAD_S} s`);
  await sleep(Math.max(0, endAt - Date.now()));
  await waitFor(async () => gauge(await metricsOf(gate), "taskgate_tasks_in_flight") === 0, "every held call to end", lastEnd - Date.now() + 120_000, 500);
  out.figure("from the last planned end until none was in flight", `${round((Date.now() - lastEnd) / 1000, 1)} s`);
  const verdicts = new Map<string, number>();
  await pool([...ids], 20, async ([n, id]) => {
    const task = await getTask(gate.url, id);
    const own = `Slept ${seconds.get(n)} s (h-${n})`;
    const verdict = task.status !== "completed" ? String(task.status) : task.result?.content?.[0]?.text === own ? "right" : "completed with another result";
    verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
  });
  out.figure("held calls read back after their end (tasks/get)", [...verdicts].map(([k, v]) => `${k} ${v}`).join(", "));
  const right = verdicts.get("right") ?? 0;
  out.target("every held call ended with its own result", `${right} of ${ids.size} completed with their own result`, right === ids.size);
}
