import { round } from "../lib/load.js";
import { gauge, metricsOf } from "../lib/metrics.js";
import { commandDelta } from "../lib/redis.js";
import type { Scenario } from "../lib/result.js";
import { demoStdio, startGateway, type Server } from "../lib/servers.js";
import { callTool, getTask } from "../lib/tasks.js";
import { pool, sleep, waitFor } from "../lib/wait.js";

/** The default stdio pool (src/upstream/mux/isolation.ts STDIO_POOL_SIZE). */
const DEFAULT_POOL_SIZE = 8;
const CREATE_CONCURRENCY = 100;
const KEY_PREFIX = "bench-q:";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * q. (opt-in: `BENCH_ONLY=q`; BENCH_QUEUE_TASKS × BENCH_QUEUE_SECONDS, 500 × 20 s by default) A batch
 * of long tasks against the demo server on the default configuration (one replica, the default
 * pool of 8 processes, the quiet lane, queueTimeoutMs 60 s, tasks that detach after 3 s): all of
 * them must complete, however long they queue. Reports the time from the first create to the last
 * completion against the ideal for the pool alone (ceil(N / 8) × S), Redis commands a second while
 * they queue (nothing polls meanwhile: the bench waits on /metrics), and the queue's wait histogram
 * from /metrics. Each task is read once at the end for its own result.
 */
export const taskQueue: Scenario = {
  id: "q",
  title: "A batch of long tasks on the default configuration: every one waits its turn and completes",
  optIn: true,
  goals: {
    "tasks completed": "all, each with its own result",
    "failed by the queue": "none",
  },
  async run(ctx, out) {
    const tasks = ctx.queueTasks;
    const seconds = ctx.queueSeconds;
    let gate: Server | undefined;
    try {
      await ctx.redis.client.flushall();
      gate = await startGateway({ store: { redisUrl: ctx.redis.url, keyPrefix: KEY_PREFIX }, upstreams: [demoStdio()] });
      const g = gate;
      out.figure("settings", `${tasks} calls of the demo's sleep tool, ${seconds} s each, one principal, every setting at its default (poolSize 8)`);
      const ideal = Math.ceil(tasks / DEFAULT_POOL_SIZE) * seconds;
      const before = await ctx.redis.commandCalls();
      const started = Date.now();
      const ids = await pool(
        Array.from({ length: tasks }, (_, n) => n),
        CREATE_CONCURRENCY,
        async (n) => {
          const result = await callTool(g.url, "sleep", { seconds, label: `q-${n}`, progressIntervalMs: 3_600_000 }, `q-${n}`);
          if (result?.resultType !== "task") throw new Error(`call ${n} did not become a task: ${JSON.stringify(result).slice(0, 300)}`);
          return result.taskId as string;
        },
      );
      const createdS = (Date.now() - started) / 1000;
      out.figure("created", `${tasks} tasks in ${round(createdS, 1)} s (each detached after tasks.detachAfterMs, 3 s)`);
      // While they queue: Redis commands a second with nobody polling, and the longest queue seen.
      let longest = 0;
      const queueStart = Date.now();
      const queueBefore = await ctx.redis.commandCalls();
      let queueAfter = queueBefore;
      let queueEnd = queueStart;
      await waitFor(
        async () => {
          const m = await metricsOf(g);
          const queued = gauge(m, "taskgate_upstream_queue_length");
          longest = Math.max(longest, queued);
          if (queued > 0) {
            queueAfter = await ctx.redis.commandCalls();
            queueEnd = Date.now();
          }
          return gauge(m, "taskgate_tasks_in_flight") === 0;
        },
        "every task to end",
        (ideal + seconds * 4 + 120) * 1000,
        500,
      );
      const endedS = (Date.now() - started) / 1000;
      const during = commandDelta(queueBefore, queueAfter);
      const queuedS = Math.max(0.001, (queueEnd - queueStart) / 1000);
      const byName = Object.entries(during.calls)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${round(v / queuedS, 1)}`)
        .join(", ");
      out.figure(
        "Redis commands a second while tasks queued",
        `${round(during.total / queuedS, 1)} over ${round(queuedS, 1)} s with up to ${longest} queued, no polls (${byName || "none"})`,
      );
      const all = commandDelta(before, await ctx.redis.commandCalls());
      out.figure("Redis commands for the whole batch", `${all.total} (${round(all.total / tasks, 1)} a task, creates and ends included)`);
      const ends = await pool(ids, 50, (id) => getTask(g.url, id));
      const completed = ends.filter((t, n) => t.status === "completed" && t.result?.content?.[0]?.text === `Slept ${seconds} s (q-${n})`).length;
      const byQueue = ends.filter((t) => t.status === "failed" && /is busy/.test(t.error?.message ?? t.statusMessage ?? "")).length;
      const lastEnd = Math.max(...ends.map((t) => new Date(t.lastUpdatedAt).getTime()));
      const lastS = (lastEnd - started) / 1000;
      out.figure(
        "time to the last completion",
        `${round(lastS, 1)} s; ideal for the pool alone ${ideal} s (ceil(${tasks} / ${DEFAULT_POOL_SIZE}) × ${seconds} s): ${round(lastS / ideal, 2)}× of it; all at once ${seconds} s`,
      );
      out.figure("all ended (gauge at 0)", `${round(endedS, 1)} s after the first create`);
      const metrics = await metricsOf(g);
      const buckets = [...metrics.matchAll(/^taskgate_upstream_queue_wait_seconds_bucket\{le="([^"]+)",upstream="demo"\} (\d+)$/gm)].map(
        (m) => `≤${m[1]} s: ${m[2]}`,
      );
      out.figure("queue wait histogram (cumulative, /metrics taskgate_upstream_queue_wait_seconds)", buckets.join(", "));
      out.figure(
        "queue wait sum / count",
        `${round(gauge(metrics, "taskgate_upstream_queue_wait_seconds_sum"), 1)} s / ${gauge(metrics, "taskgate_upstream_queue_wait_seconds_count")}`,
      );
      const statuses = new Map<string, number>();
      for (const t of ends) statuses.set(t.status, (statuses.get(t.status) ?? 0) + 1);
      out.target(
        "tasks completed",
        `${completed} of ${tasks} with their own result (${[...statuses].map(([s, n]) => `${s} ${n}`).join(", ")})`,
        completed === tasks,
      );
      out.target("failed by the queue", `${byQueue}`, byQueue === 0);
      if (ends.some((t) => !TERMINAL.has(t.status))) out.note("some tasks had not ended when read");
      await sleep(0);
    } finally {
      await gate?.proc.stop();
      await ctx.redis.client.flushall().catch(() => undefined);
    }
  },
};
