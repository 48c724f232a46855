import { cpuMicros } from "../lib/cpu.js";
import { round } from "../lib/load.js";
import type { Scenario } from "../lib/result.js";
import { demoStdio, startGateway, type Server } from "../lib/servers.js";
import { callTool, untilEnded } from "../lib/tasks.js";
import { pool } from "../lib/wait.js";

const CONCURRENCY = 64;

/**
 * c. The whole life of a short task: a call that outlives detachAfterMs (50 ms) by a little
 * (sleep 0.06 s), so every call is detached, persisted, completed by its owner and then read back
 * completed. Counted: tasks that were polled to `completed`, per second of the creating window.
 */
export const taskThroughput: Scenario = {
  id: "c",
  title: "tasks created and completed per second (sleep 0.06 s, detachAfterMs 50)",
  goals: {},
  async run(ctx, out) {
    const servers: Server[] = [];
    try {
      const gate = await startGateway({
        store: { redisUrl: ctx.redis.url, keyPrefix: "bench-c:" },
        tasks: { detachAfterMs: 50, pollIntervalMs: 100 },
        upstreams: [demoStdio()],
      });
      servers.push(gate);
      const cpuBefore = cpuMicros(gate.proc.pid);
      const created = await createFor(gate.url, ctx.load.durationS * 1000);
      const ended = await pool(created.taskIds, CONCURRENCY, (id) => untilEnded(gate.url, id, 30_000).catch((err: Error) => `error: ${err.message}`));
      const cpuAfter = cpuMicros(gate.proc.pid);
      const completed = ended.filter((s) => s === "completed").length;
      out.figure("concurrency", CONCURRENCY);
      out.figure("calls detached into tasks", created.taskIds.length);
      out.figure("calls answered inline (finished before detaching)", created.inline);
      out.figure("failed calls", created.failed);
      out.figure("tasks polled to completed", completed);
      out.figure("tasks created and completed per second", round(completed / ctx.load.durationS, 0));
      if (cpuBefore !== undefined && cpuAfter !== undefined && completed > 0)
        out.figure("taskgate CPU-µs per task (created, detached, completed, polled until completed)", round((cpuAfter - cpuBefore) / completed, 0));
      if (created.failed) out.note(`first failure: ${created.firstError}`);
      if (created.taskIds.length === 0) throw new Error(created.firstError ?? "no call became a task");
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
    }
  },
};

interface Created {
  taskIds: string[];
  inline: number;
  failed: number;
  firstError?: string;
}

/** CONCURRENCY lanes calling back to back until the window closes; bounded by the window. */
async function createFor(url: string, windowMs: number): Promise<Created> {
  const created: Created = { taskIds: [], inline: 0, failed: 0 };
  const deadline = Date.now() + windowMs;
  let seq = 0;
  const lane = async () => {
    while (Date.now() < deadline && created.failed < 1000) {
      try {
        const result = await callTool(url, "sleep", { seconds: 0.06, progressIntervalMs: 60_000 }, `c-${seq++}`);
        if (result?.resultType === "task") created.taskIds.push(result.taskId as string);
        else created.inline++;
      } catch (err) {
        created.failed++;
        created.firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return created;
}
