import { ALL_SHARDS, RedisKeys } from "../../src/store/redis/keys.js";
import { round } from "../lib/load.js";
import type { BenchCluster } from "../lib/redis-cluster.js";
import type { ScenarioOutput } from "../lib/result.js";
import type { Server } from "../lib/servers.js";
import { getTask } from "../lib/tasks.js";

/** What one wave measured while all of it was held. */
export interface Peak {
  size: number;
  createdMs: number;
  createRate: number;
  retried: number;
  /** Calls each replica owned right after the last create, and at the end of the command window. */
  held: number[];
  heldAfter: number[];
  rss: number[];
  upstreamRss: number[];
  /** used_memory per shard, bytes. */
  shards: number[];
  windowS: number;
  heapUsed: number[];
  rssAfterGc: number[];
  /** Commands per shard over the window, by name. */
  commands: Record<string, number>[];
  callsEndInS: number;
}

/**
 * What a lease per task cost at rest, for comparison: one renewal script and the five commands
 * it ran, per held call, every 5 s (scenario e on the per-task lease,
 * bench/results/2026-12-04T13-48-47-290Z.md).
 */
const PER_TASK_RENEWAL = 6;
const DEFAULT_RENEW_EVERY_S = 5;

export function waveReport(out: ScenarioOutput, wave: number, p: Peak): void {
  const held = sum(p.held);
  const heldAfter = sum(p.heldAfter);
  const perShard = p.commands.map((c) => sum(Object.values(c)) / p.windowS);
  const all = sum(perShard);
  const perTask = (heldAfter * PER_TASK_RENEWAL) / DEFAULT_RENEW_EVERY_S;
  const names = new Map<string, number>();
  for (const c of p.commands) for (const [k, v] of Object.entries(c)) names.set(k, (names.get(k) ?? 0) + v);
  const w = `wave ${wave}`;
  out.figure(
    `${w}: created`,
    `${p.size} calls in ${round(p.createdMs / 1000, 1)} s (${round(p.createRate, 0)} a second over 3 replicas${p.retried ? `; ${p.retried} creates answered 503 and were sent again` : ""})`,
  );
  out.figure(
    `${w}: held at once, per replica`,
    `${p.held.join(" + ")} = ${held} after the last create; ${p.heldAfter.join(" + ")} = ${heldAfter} at the end of the window (the calls end ${p.callsEndInS} s later)`,
  );
  out.figure(
    `${w}: taskgate RSS per replica`,
    `${p.rss.join(", ")} MiB as found; ${p.rssAfterGc.map(mib).join(", ")} MiB after a full collection; heap ${p.heapUsed.map(mib).join(", ")} MiB used`,
  );
  out.figure(`${w}: each replica's stdio upstream (the demo server holding its calls), RSS`, `${p.upstreamRss.map((x) => round(x, 1)).join(", ")} MiB`);
  out.figure(`${w}: Redis used_memory per shard`, `${p.shards.map(mib).join(", ")} MiB (${round(sum(p.shards) / 1024 / 1024, 1)} MiB in all)`);
  out.figure(
    `${w}: Redis commands a second at rest (${round(p.windowS, 1)} s: a lease period and a reaper sweep, no creates or polls running), per shard`,
    `${perShard.map((x) => round(x, 1)).join(", ")} = ${round(all, 1)}`,
  );
  out.figure(`${w}: at rest, per shard by command, a second`, p.commands.map((c, i) => `shard ${i + 1}: ${topCommands(c, p.windowS)}`).join("; "));
  out.figure(
    `${w}: Redis commands a second per 1,000 held calls`,
    `${round((all / heldAfter) * 1000, 2)}; renewing a lease per task alone would cost ${round(perTask, 0)} a second (${PER_TASK_RENEWAL} commands per held call every ${DEFAULT_RENEW_EVERY_S} s)`,
  );
  out.figure(
    `${w}: commands over the window by name`,
    [...names]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(", "),
  );
}

/**
 * Every call's outcome, read from the cluster: completed, with the result of its own call (the
 * sleep it was asked for, in its text). Tasks the store holds beyond the calls answered would be
 * duplicates (a create sent again after a 503 whose first try still made a task).
 */
/** What a call asked for, and the replica that answered its create. */
export interface Made {
  seconds: number;
  replica: number;
}

export async function checkOutcomes(out: ScenarioOutput, redis: BenchCluster, servers: Server[], expected: Map<string, Made>, prefix: string): Promise<void> {
  const keys = new RedisKeys(prefix);
  const ids = [...expected.keys()];
  const counts = new Map<string, number>();
  const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  for (let i = 0; i < ids.length; i += 2_000) {
    const batch = ids.slice(i, i + 2_000);
    const read = await Promise.all(batch.map((id) => Promise.all([redis.client.hget(keys.task(id), "status"), redis.client.get(keys.taskOutcome(id))])));
    read.forEach(([status, outcome], j) => count(verdict(status, outcome, expected.get(batch[j]!)!.seconds)));
  }
  // Every task, from the store's own listing index (split over ALL_SHARDS sorted sets).
  const shards = await Promise.all(Array.from({ length: ALL_SHARDS }, (_, n) => redis.client.zcard(keys.allTasksShard(n))));
  const stored = shards.reduce((a, b) => a + b, 0);
  const right = counts.get("right") ?? 0;
  out.figure("calls answered with a task handle", ids.length);
  out.figure("tasks in the store", stored);
  out.figure("outcomes read from the cluster", [...counts].map(([k, v]) => `${k} ${v}`).join(", "));
  const sample = await crossReplicaSample(servers, expected);
  out.figure("tasks/get through a replica other than the one that made the task (every 100th task)", sample);
  const ok = right === ids.length && stored === ids.length;
  out.target("every call ended right", `${right} of ${ids.length} completed with their own result; ${stored - ids.length} tasks beyond the handles`, ok);
}

function verdict(status: string | null, outcome: string | null, seconds: number): string {
  if (status === null) return "missing";
  if (status !== "completed") return status;
  const text = outcome ? (JSON.parse(outcome) as { result?: { content?: { text?: string }[] } }).result?.content?.[0]?.text : undefined;
  return text === `Slept ${seconds} s` ? "right" : "completed with another result";
}

async function crossReplicaSample(servers: Server[], expected: Map<string, Made>): Promise<string> {
  const statuses = new Map<string, number>();
  let i = 0;
  for (const [id, { replica }] of expected) {
    if (i++ % 100 !== 0) continue;
    const status = String((await getTask(servers[(replica + 1) % servers.length]!.url, id)).status);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  return [...statuses].map(([k, v]) => `${k} ${v}`).join(", ");
}

function topCommands(calls: Record<string, number>, windowS: number): string {
  return (
    Object.entries(calls)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${round(v / windowS, 1)}`)
      .join(", ") || "none"
  );
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function mib(bytes: number): number {
  return round(bytes / 1024 / 1024, 1);
}
