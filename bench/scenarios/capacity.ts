import { round } from "../lib/load.js";
import type { BenchContext, ScenarioOutput } from "../lib/result.js";
import { startGateway, type Server } from "../lib/servers.js";
import { getTask } from "../lib/tasks.js";
import { sleep } from "../lib/wait.js";
import { heldUpstream } from "./in-flight.js";

/** The reaper's default interval (src/config/schema.ts). */
const DEFAULT_REAPER_INTERVAL_MS = 5_000;
const SWEEPS = 3;

/** What scenario e measured on the replica holding the calls. */
export interface Held {
  tasks: number;
  restRssMiB: number;
  rssMiB: number;
  redisBytesPerTask: number;
  /** Commands and lease renewals (EVALSHA) Redis ran per renewal interval with `tasks` held, and that interval. */
  renewalCommands: number;
  renewals: number;
  renewIntervalMs: number;
  leaseMs: number;
  keyPrefix: string;
  /** A held task, read after the sweeps: still working unless a lease lapsed and the reaper ended it. */
  sampleId: string;
  url: string;
}

/**
 * The capacity model from scenario e's figures: tasks in flight per GB of the
 * replica's memory and of Redis's, and Redis commands per second per 1,000 tasks in flight at
 * rest with the default reaper. The holding replica runs with the reaper held off, so a second
 * replica (the same lease, the default reaper interval) joins and sweeps the held tasks, as one
 * replica of a deployment does; its share is what Redis ran beyond the measured renewals.
 */
export async function capacity(ctx: BenchContext, out: ScenarioOutput, servers: Server[], held: Held): Promise<void> {
  const sweeper = await startGateway({
    store: { redisUrl: ctx.redis.url, keyPrefix: held.keyPrefix },
    tasks: { leaseMs: held.leaseMs, defaultTtlMs: 600_000, reaperIntervalMs: DEFAULT_REAPER_INTERVAL_MS },
    limits: { maxActiveTasksPerPrincipal: 0 },
    upstreams: [heldUpstream()],
  });
  servers.push(sweeper);
  await sleep(DEFAULT_REAPER_INTERVAL_MS); // its first sweep has run
  const windowMs = SWEEPS * DEFAULT_REAPER_INTERVAL_MS;
  const before = await ctx.redis.commandCalls();
  await sleep(windowMs);
  const after = await ctx.redis.commandCalls();
  out.figure("a sampled task's status after the sweeps", String((await getTask(held.url, held.sampleId)).status));
  let total = 0;
  for (const [name, n] of after) if (name !== "info") total += n - (before.get(name) ?? 0);
  const perS = total / (windowMs / 1000);
  const renewalPerS = held.renewalCommands / (held.renewIntervalMs / 1000);
  const reaperPerSweep = Math.max(0, (perS - renewalPerS) * (DEFAULT_REAPER_INTERVAL_MS / 1000));
  const per1000 = (x: number) => round((x / held.tasks) * 1000, 2);
  const grownMB = (held.rssMiB - held.restRssMiB) * 1.048576;
  out.figure(
    `Redis commands per second with ${held.tasks} held (the holding replica renewing its lease every ${held.renewIntervalMs} ms, a second replica sweeping every ${DEFAULT_REAPER_INTERVAL_MS} ms)`,
    round(perS, 1),
  );
  out.figure(`reaper and the second replica: Redis commands per sweep with ${held.tasks} tasks`, round(reaperPerSweep, 1));
  out.figure("capacity: tasks in flight per GB of taskgate RSS (growth over rest)", grownMB > 0 ? round((held.tasks / grownMB) * 1000, 0) : "-");
  out.figure("capacity: tasks in flight per GB of Redis used_memory", round(1e9 / held.redisBytesPerTask, 0));
  // A lease per replica, not per task: what Redis runs at rest does not grow with the calls held
  // (scenario h measures it at 300, 3,000 and 30,000 at the defaults).
  out.figure("capacity: Redis commands/s per 1,000 tasks in flight at rest", per1000(perS));
}
