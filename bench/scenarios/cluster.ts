import { round } from "../lib/load.js";
import { byLabel, gauge, grown, metricsOf } from "../lib/metrics.js";
import { readProbe, probeLaunch } from "../lib/probe-client.js";
import { childPids, rssMiB } from "../lib/probe.js";
import { clusterCommandCalls, startRedisCluster, type BenchCluster } from "../lib/redis-cluster.js";
import type { Scenario, ScenarioOutput } from "../lib/result.js";
import { startGateway, type Server } from "../lib/servers.js";
import { createTask } from "../lib/tasks.js";
import { pool, sleep, waitFor } from "../lib/wait.js";
import { heldUpstream } from "./in-flight.js";
import { checkOutcomes, waveReport, type Made, type Peak } from "./cluster-report.js";

const REPLICAS = 3;
const MASTERS = 3;
const KEY_PREFIX = "bench-r:";
const CREATE_CONCURRENCY = 40;
const CREATE_ATTEMPTS = 8;
/** The first wave, small: it measures the create rate the next waves plan their calls' end with. */
const FIRST_WAVE = 600;
/** At rest: one lease (the default 15 s) and one reaper sweep (the default 5 s), no creates or polls running. */
const WINDOW_MS = 20_000;
/** The calls of a wave end together, this long after the wave's last create would at the rate measured so far. */
const MARGIN_MS = WINDOW_MS + 20_000;

/**
 * r. (opt-in: `BENCH_ONLY=r`, it takes minutes) BENCH_CLUSTER_CALLS detached calls (100,000) across
 * three taskgate replicas on a three-master Redis Cluster on loopback, every setting at its default
 * but the upstream's concurrency (every held call runs at once, as in scenario e) and the
 * per-principal task limit (every call is one principal). On a 2-core machine they go in waves of
 * BENCH_CLUSTER_WAVE (30,000: 10,000 per replica, scenario e's count) after a first wave of 600 that
 * measures the create rate; each call sleeps until a
 * common end a little after the wave's last create, so the whole wave is held at once when the
 * figures are taken: RSS and heap per replica, Redis memory per shard, and the Redis commands a
 * second per shard at rest (a lease period and a reaper sweep with no creates or polls running). At the end every call's
 * outcome is read from the cluster and checked against the call that made it.
 */
export const cluster: Scenario = {
  id: "r",
  title: "detached calls across 3 replicas on a 3-master Redis Cluster",
  optIn: true,
  goals: {
    "every call ended right": "all completed, each with its own result; none lost, none duplicated",
    "leases lost": "none, on any replica",
  },
  async run(ctx, out) {
    const total = ctx.clusterCalls;
    const waveSize = Math.min(ctx.clusterWave, total);
    const servers: Server[] = [];
    let redis: BenchCluster | undefined;
    try {
      redis = await startRedisCluster(MASTERS);
      out.figure("Redis Cluster", `${MASTERS} masters, no replicas: ${redis.seeds.join(", ")}`);
      for (let i = 0; i < REPLICAS; i++) servers.push(await startReplica(redis));
      const baseline = await restFigures(redis, servers);
      out.figure("at rest", `RSS per replica ${baseline.rss.join(", ")} MiB; Redis used_memory per shard ${baseline.shards.join(", ")} MiB`);
      const expected = new Map<string, Made>();
      let rate = 50; // creates per second until the first wave says otherwise
      for (let made = 0, wave = 1; made < total; wave++) {
        const size = Math.min(wave === 1 ? FIRST_WAVE : waveSize, total - made);
        const peak = await runWave(redis, servers, made, size, rate, expected);
        rate = peak.createRate;
        waveReport(out, wave, peak);
        made += size;
        const stuck = await untilDrained(servers, size);
        if (stuck) out.note(`wave ${wave}: when the wait for its calls to end gave up, per replica: ${stuck.join("; ")}`);
      }
      await checkOutcomes(out, redis, servers, expected, KEY_PREFIX);
      await leasesAndErrors(out, servers);
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
      await redis?.close();
    }
  },
};

function startReplica(redis: BenchCluster): Promise<Server> {
  const config = {
    store: { cluster: redis.seeds, keyPrefix: KEY_PREFIX },
    // Every caller is one principal without auth; the default limit would refuse past it.
    limits: { maxActiveTasksPerPrincipal: 0 },
    upstreams: [heldUpstream()],
  };
  // The probe reads heap after a full collection; its Redis counts are not used here.
  return startGateway(config, probeLaunch(`redis://${redis.seeds[0]}`, true));
}

async function restFigures(redis: BenchCluster, servers: Server[]) {
  return {
    rss: servers.map((s) => rssMiB(s.proc.pid)),
    shards: await Promise.all(redis.nodes.map(async (n) => mib(Number((await n.info("memory")).get("used_memory"))))),
  };
}

/** Create one wave round-robin over the replicas, take the figures while all of it is held. */
async function runWave(redis: BenchCluster, servers: Server[], from: number, size: number, rate: number, expected: Map<string, Made>): Promise<Peak> {
  const started = Date.now();
  const endAt = started + (size / rate) * 1000 * 1.5 + MARGIN_MS;
  let retried = 0;
  await pool(
    Array.from({ length: size }, (_, i) => from + i),
    CREATE_CONCURRENCY,
    async (n) => {
      const replica = n % servers.length;
      const url = servers[replica]!.url;
      // Tenths of a second, so the result text ("Slept 41.3 s") tells the calls apart.
      const seconds = Math.max(1, Math.round((endAt - Date.now()) / 100) / 10);
      for (let attempt = 1; ; attempt++) {
        try {
          expected.set(await createTask(url, "sleep", { seconds, progressIntervalMs: 3_600_000 }, `r-${n}-${attempt}`), { seconds, replica });
          return;
        } catch (err) {
          // A 503 (a store call past its deadline) or a connection dropped under load: sent again as a
          // client would; a task its first try made anyway shows as a task beyond the handles.
          if (attempt >= CREATE_ATTEMPTS || !/answered 503|fetch failed/.test(String((err as Error).message))) throw err;
          retried++;
          await sleep(250 * attempt);
        }
      }
    },
  );
  const createdMs = Date.now() - started;
  const held = await inFlight(servers);
  const rss = servers.map((s) => rssMiB(s.proc.pid));
  const upstreamRss = servers.map((s) =>
    childPids(s.proc.pid)
      .map(rssMiB)
      .reduce((a, b) => a + b, 0),
  );
  const shards = await Promise.all(redis.nodes.map(async (n) => Number((await n.info("memory")).get("used_memory"))));
  const before = await clusterCommandCalls(redis.nodes);
  const windowStart = Date.now();
  await sleep(WINDOW_MS);
  const after = await clusterCommandCalls(redis.nodes);
  const windowS = (Date.now() - windowStart) / 1000;
  const heldAfter = await inFlight(servers);
  const heap = await Promise.all(servers.map((s) => readProbe(s.proc)));
  return {
    size,
    createdMs,
    createRate: size / (createdMs / 1000),
    retried,
    held,
    heldAfter,
    rss,
    upstreamRss,
    shards,
    windowS,
    heapUsed: heap.map((h) => h.heapUsed),
    rssAfterGc: heap.map((h) => h.rss),
    commands: redis.nodes.map((_, i) => delta(before[i]!, after[i]!)),
    callsEndInS: round((endAt - Date.now()) / 1000, 0),
  };
}

function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const [name, n] of after) if (name !== "info" && n > (before.get(name) ?? 0)) calls[name] = n - (before.get(name) ?? 0);
  return calls;
}

/** Detached calls each replica owns right now (its taskgate_tasks_in_flight gauge). */
/** What each replica counted over the whole run: leases lost, store errors by operation. */
async function leasesAndErrors(out: ScenarioOutput, servers: Server[]): Promise<void> {
  const texts = await Promise.all(servers.map((s) => metricsOf(s)));
  const lost = texts.map((t) => gauge(t, "taskgate_lease_losses_total"));
  const errors = texts.map((t) => grown(new Map(), byLabel(t, "taskgate_store_errors_total", "operation")).text);
  out.figure("store errors per replica over the run", errors.join("; "));
  out.target(
    "leases lost",
    `${lost.join(" + ")} = ${lost.reduce((a, b) => a + b, 0)} (taskgate_lease_losses_total per replica)`,
    lost.every((n) => n === 0),
  );
}

async function inFlight(servers: Server[]): Promise<number[]> {
  return Promise.all(servers.map(async (s) => gauge(await metricsOf(s), "taskgate_tasks_in_flight")));
}

/**
 * Where each replica's calls stand: held, and how many the upstream answered against how many
 * were created. A call held after its upstream answered waits on its outcome write, not on the
 * upstream.
 */
async function standing(servers: Server[]): Promise<string[]> {
  return Promise.all(
    servers.map(async (s) => {
      const text = await metricsOf(s);
      const [held, created, answered, lost] = [
        "taskgate_tasks_in_flight",
        "taskgate_tasks_created_total",
        "taskgate_upstream_call_duration_seconds_count",
        "taskgate_lease_losses_total",
      ].map((n) => gauge(text, n));
      return `${held} held, ${created} created, ${answered} answered by the upstream, ${lost} leases lost`;
    }),
  );
}

/**
 * Every call of the wave has ended (bounded: the calls end by themselves, a little after the
 * figures). Undefined when they did; else the calls each replica still holds: the run goes on, and
 * the outcomes read at the end say what became of them.
 */
async function untilDrained(servers: Server[], size: number): Promise<string[] | undefined> {
  try {
    await waitFor(async () => (await inFlight(servers)).every((n) => n === 0), "the wave's calls to end", 120_000 + size * 10, 1_000);
    return undefined;
  } catch (err) {
    if (!String((err as Error).message).startsWith("timed out")) throw err;
    return standing(servers);
  }
}

function mib(bytes: number): number {
  return round(bytes / 1024 / 1024, 1);
}
