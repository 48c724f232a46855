import { createHeld, heldUpstreams, upstreamUrl } from "../lib/held.js";
import { round } from "../lib/load.js";
import { LogLines } from "../lib/log-lines.js";
import { byLabel, gauge, grown, metricsOf } from "../lib/metrics.js";
import type { Scenario, ScenarioOutput } from "../lib/result.js";
import { startGateway, type Server } from "../lib/servers.js";
import { getTask } from "../lib/tasks.js";
import { pool, waitFor } from "../lib/wait.js";
import { heldUpstream } from "./in-flight.js";

const KEY_PREFIX = "bench-o:";
const CREATE_CONCURRENCY = 50;
/** Short calls first, to learn the create rate the common end is planned with. */
const CALIBRATION = 300;
/** The common end: this long after the last create would be at half the rate measured. */
const MARGIN_MS = 10_000;
/** How long after the common end the outcomes may take before the scenario gives up. */
const RECORD_DEADLINE_MS = 180_000;
/** The log lines of a task's end: the task's own line and its audit line (src/tasks/owned-call.ts, src/observability/audit.ts). */
const ENDED_LINE = "task ended";
const AUDIT_LINE = "audit task.end";

/**
 * o. (opt-in: `BENCH_ONLY=o`) BENCH_BURST detached calls (10,000) on one replica at the default
 * settings, each a `sleep` aimed at one common wall-clock end, so the gateway has that many
 * outcomes to write at once. Measured: every task completed with its own result (the label its
 * call gave), how long from the common end until every outcome is stored, store errors by
 * operation (an outcome write the store refused in time counts one and is tried again, so these
 * are the retries), warnings, and that each end is counted once: taskgate_tasks_ended_total and
 * the end's log and audit lines each grow by exactly the calls made.
 */
export const endingsTogether: Scenario = {
  id: "o",
  title: "detached calls that all end in the same second, one replica",
  optIn: true,
  goals: {
    "every call ended with its own result": "all completed, each with the result of its own call",
    "each end counted once": "taskgate_tasks_ended_total, `task ended` lines and `audit task.end` lines each grow by exactly the calls made",
    "store errors during the burst": "none",
  },
  async run(ctx, out) {
    const n = ctx.burstCalls;
    let gate: Server | undefined;
    try {
      await ctx.redis.client.flushall();
      gate = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: KEY_PREFIX },
        // Every caller is one principal without auth; the default limit would refuse past it.
        limits: { maxActiveTasksPerPrincipal: 0 },
        upstreams: heldUpstreams(n, heldUpstream()),
      });
      const g = gate;
      const logs = new LogLines(g.proc);
      const urlOf = (i: number) => upstreamUrl(g, n, i);
      const rate = await calibrate(g, urlOf);
      out.figure("create rate measured first", `${round(rate, 0)} a second (${CALIBRATION} one-second calls, ended before the burst)`);
      const before = { metrics: await metricsOf(g), ended: logs.count(ENDED_LINE), audited: logs.count(AUDIT_LINE), warnings: logs.warnings() };
      const started = Date.now();
      const endAt = started + (n / rate) * 2_000 + MARGIN_MS;
      let late = 0;
      const seconds = new Map<number, number>();
      const { ids, retried } = await createHeld(
        urlOf,
        0,
        n,
        (i) => {
          const s = (endAt - Date.now()) / 1000;
          if (s < 0.1) late++;
          seconds.set(i, Math.max(0.1, s));
          return { seconds: Math.max(0.1, s), progressIntervalMs: 3_600_000, label: `o-${i}` };
        },
        CREATE_CONCURRENCY,
      );
      const createdS = (Date.now() - started) / 1000;
      const held = gauge(await metricsOf(g), "taskgate_tasks_in_flight");
      out.figure(
        "created",
        `${n} calls in ${round(createdS, 1)} s (${round(n / createdS, 0)} a second); ${held} held ${round((endAt - Date.now()) / 1000, 1)} s before the common end${retried ? `; ${retried} creates answered 503 or dropped and sent again` : ""}${late ? `; ${late} created after the common end` : ""}`,
      );
      // A create sent again whose first try made a task anyway holds one call more: it ends too.
      const ends = Math.max(ids.size, held);
      const baseEnded = gauge(before.metrics, "taskgate_tasks_ended_total");
      const recorded = await waitFor(
        async () => (gauge(await metricsOf(g), "taskgate_tasks_ended_total") - baseEnded >= ends ? Date.now() : undefined),
        "every outcome to be recorded",
        endAt - Date.now() + RECORD_DEADLINE_MS,
        100,
      ).catch(() => undefined);
      out.figure(
        "from the common end until every outcome was recorded (taskgate_tasks_ended_total, read every 100 ms)",
        recorded === undefined ? `not within ${RECORD_DEADLINE_MS / 1000} s` : `${round((recorded - endAt) / 1000, 2)} s`,
      );
      await outcomes(out, g, ids, seconds, endAt);
      // The log lines of the last ends may still be on their way through the pipe.
      await waitFor(() => logs.count(AUDIT_LINE) - before.audited >= ends, "the ends' audit lines", 10_000).catch(() => undefined);
      counted(out, ends, before, { metrics: await metricsOf(g), ended: logs.count(ENDED_LINE), audited: logs.count(AUDIT_LINE), warnings: logs.warnings() });
    } finally {
      await gate?.proc.stop();
      await ctx.redis.client.flushall().catch(() => undefined);
    }
  },
};

async function calibrate(gate: Server, urlOf: (i: number) => string): Promise<number> {
  const started = Date.now();
  await createHeld(urlOf, 0, CALIBRATION, (i) => ({ seconds: 1, progressIntervalMs: 3_600_000, label: `calibration-${i}` }), CREATE_CONCURRENCY);
  const rate = CALIBRATION / ((Date.now() - started) / 1000);
  await waitFor(async () => gauge(await metricsOf(gate), "taskgate_tasks_in_flight") === 0, "the calibration calls to end", 60_000, 200);
  return rate;
}

/** Every task read back through tasks/get: its status, its own result, and when it was last updated after the common end. */
async function outcomes(out: ScenarioOutput, gate: Server, ids: Map<number, string>, seconds: Map<number, number>, endAt: number): Promise<void> {
  const verdicts = new Map<string, number>();
  const after: number[] = [];
  await pool([...ids], 20, async ([i, id]) => {
    const task = await getTask(gate.url, id);
    const text = task.result?.content?.[0]?.text;
    const own = `Slept ${Math.round(seconds.get(i)! * 10) / 10} s (o-${i})`;
    const verdict = task.status !== "completed" ? String(task.status) : text === own ? "right" : "completed with another result";
    verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    after.push(Date.parse(task.lastUpdatedAt) - endAt);
  });
  after.sort((a, b) => a - b);
  const at = (q: number) => round(after[Math.min(after.length - 1, Math.floor(q * after.length))]! / 1000, 2);
  out.figure("outcomes read back (tasks/get)", [...verdicts].map(([k, v]) => `${k} ${v}`).join(", "));
  out.figure("each task's lastUpdatedAt after the common end, s", `first ${at(0)}, median ${at(0.5)}, p99 ${at(0.99)}, last ${at(1)}`);
  const right = verdicts.get("right") ?? 0;
  out.target("every call ended with its own result", `${right} of ${ids.size} completed with their own result`, right === ids.size);
}

interface Reading {
  metrics: string;
  ended: number;
  audited: number;
  warnings: Map<string, number>;
}

function counted(out: ScenarioOutput, calls: number, before: Reading, after: Reading): void {
  const metric = gauge(after.metrics, "taskgate_tasks_ended_total") - gauge(before.metrics, "taskgate_tasks_ended_total");
  const lines = after.ended - before.ended;
  const audits = after.audited - before.audited;
  out.target(
    "each end counted once",
    `taskgate_tasks_ended_total +${metric}, \`${ENDED_LINE}\` lines ${lines}, \`${AUDIT_LINE}\` lines ${audits}, for ${calls} calls held`,
    metric === calls && lines === calls && audits === calls,
  );
  const errors = grown(byLabel(before.metrics, "taskgate_store_errors_total", "operation"), byLabel(after.metrics, "taskgate_store_errors_total", "operation"));
  // An outcome write the store did not answer in time counts here and is tried again
  // (src/tasks/store-retry.ts): its operation's count is the retries.
  out.target("store errors during the burst", `${errors.text} (taskgate_store_errors_total by operation)`, errors.total === 0);
  out.figure("warnings logged during the burst", grown(before.warnings, after.warnings).text);
  const lost = gauge(after.metrics, "taskgate_lease_losses_total") - gauge(before.metrics, "taskgate_lease_losses_total");
  out.figure("leases lost during the burst", lost);
}
