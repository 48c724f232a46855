import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drive, seeded, type Outcome, type Plan } from "../helpers/load.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import {
  command,
  cutReplication,
  startNode,
  startReplicated,
  startSentinels,
  type RedisNode,
  type ReplicatedRedis,
  type Sentinels,
} from "../helpers/redis-ha.js";
import { startRedisCluster, type RedisClusterProcess } from "../helpers/redis-cluster.js";
import { useCleanups } from "../helpers/cleanups.js";
import { ended, FAST_TASKS, startTask } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const TASKS = 200;
const TOOLS = { echo: { taskSupport: "required" }, deploy: { taskSupport: "required" }, sleep: { taskSupport: "required" } };
/** The default lease: longer than a failover, so owners keep their calls through it. */
const TASK_CONFIG = { detachAfterMs: 200, cancelGraceMs: 300, pollIntervalMs: 300, leaseMs: 15_000, reaperIntervalMs: 500 };

interface HaRedis {
  /** store.* for the gateways */
  store: Record<string, unknown>;
  /** The primary that lags then dies: its port. */
  victim(): Promise<number>;
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

async function sentinelRedis(): Promise<HaRedis> {
  const redis: ReplicatedRedis = await startReplicated(1);
  const sentinels: Sentinels = await startSentinels(redis.primary.port, "tg", 1);
  return {
    store: { sentinel: { name: "tg", nodes: sentinels.nodes } },
    victim: async () => redis.primary.port,
    kill: () => redis.primary.kill("SIGKILL"),
    stop: async () => {
      await sentinels.stop();
      await redis.stop();
    },
  };
}

async function clusterRedis(): Promise<HaRedis> {
  const cluster: RedisClusterProcess = await startRedisCluster(3, { replicas: 1 });
  return {
    store: { cluster: cluster.nodes },
    // A primary with slots, as the cluster lists it now.
    victim: async () => {
      const nodes = String(await command(Number(cluster.nodes[0]!.split(":")[1]), ["CLUSTER", "NODES"]));
      const primary = nodes.split("\n").find((l) => /master/.test(l.split(" ")[2] ?? "") && l.split(" ").length > 8);
      return Number(primary!.split(" ")[1]!.split("@")[0]!.split(":")[1]);
    },
    kill: (port) => cluster.kill(port),
    stop: () => cluster.stop(),
  };
}

describe.each([
  ["Sentinel", sentinelRedis],
  ["Cluster with a replica per shard", clusterRedis],
] as const)("a Redis primary killed under load: %s", (_, start) => {
  let redis: HaRedis;
  let demo: RunningProcess & { mcpUrl: string };
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    redis = await start();
    demo = await startDemoHttp();
    const store = { ...redis.store, keyPrefix: `ha${randomBytes(3).toString("hex")}:`, waitTimeoutMs: 500 };
    const config = { log: { level: "info" }, store, tasks: TASK_CONFIG, upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.mcpUrl }, tools: TOOLS }] };
    gateways = await Promise.all([1, 2, 3].map(() => startGateway(config)));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    await demo?.stop();
    await redis?.stop();
  });

  it(`loses no acknowledged task of ${TASKS} in flight when a primary whose replica lags is killed, answers every poll, and takes new calls within 10 s`, async () => {
    const seed = Date.now() % 1_000_000;
    const random = seeded(seed);
    const plans = Array.from({ length: TASKS }, (_, i) => plan(i, random));
    const urls = gateways.map((g) => g.mcpUrl);
    const deadline = Date.now() + 100_000;
    const victim = await redis.victim();
    let acknowledged = 0;
    let failover: Promise<{ killedAt: number }> | undefined;
    // A third of the way through the acknowledgements, the victim's replica stops receiving; a
    // second later the victim dies and that replica is promoted, without what it missed.
    const onAck = () => {
      if (++acknowledged === Math.floor(TASKS / 3)) failover = lagThenKill(redis, victim);
    };
    const polls = pollThroughout(urls);
    const outcomes = await Promise.all(plans.map((p, i) => drive(urls, p, seeded(seed + i + 1), deadline, onAck)));
    const { killedAt } = await failover!;
    // A new call after the kill: created (acknowledged) within 10 s of it.
    const fresh = await waitFor(() => startTask(urls[0]!, "echo", { text: "after the failover" }).catch(() => undefined), {
      timeoutMs: Math.max(1, killedAt + 10_000 - Date.now()),
      what: "a new task after the failover",
    });
    const answers = await polls.stop();

    const counts = tally(outcomes);
    console.log(`${_} failover (seed ${seed}): ${JSON.stringify({ ...counts, polls: answers.length })}`);
    const failed = [...counts.notEnded, ...counts.wrong].map((line) => line.split(" ")[0]!);
    if (failed.length)
      for (const g of gateways)
        console.log(
          g
            .output()
            .split("\n")
            .filter((l) => /"level":"(warn|error)"/.test(l) || failed.slice(0, 3).some((id) => l.includes(id)))
            .slice(0, 40)
            .join("\n"),
        );
    expect(counts.acknowledged).toBe(TASKS);
    expect(counts.notEnded).toEqual([]);
    expect(counts.wrong).toEqual([]);
    expect(counts.completed + counts.cancelled).toBe(TASKS);
    expect(await ended(urls, fresh)).toMatchObject({ status: "completed" });
    // Every poll was answered: the task, or (during the failover itself) a JSON-RPC error with 503.
    expect(answers.filter((a) => !a.wellFormed)).toEqual([]);
    expect(answers.some((a) => a.status === 200)).toBe(true);
    for (const g of gateways) expect(g.output()).not.toMatch(/lost the record of a task/);
  }, 150_000);
});

describe("a task record the store lost while its call ran", () => {
  const { track } = useCleanups();
  let dir: string;
  let redis: RedisNode;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "taskgate-lost-"));
    // An eviction policy taskgate warns about at start.
    redis = await startNode(["--maxmemory-policy", "allkeys-lru"], dir);
  });
  afterAll(async () => {
    await redis?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it("is reported at error level, counted, and written again: failed saying so, or with the outcome the owner still had", async () => {
    const prefix = `lost${randomBytes(3).toString("hex")}:`;
    const config = {
      store: { redisUrl: redis.url, keyPrefix: prefix },
      tasks: FAST_TASKS,
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: TOOLS }],
    };
    const gateway = track(await startGateway(config));
    expect(gateway.output()).toMatch(/has maxmemory-policy allkeys-lru: .*noeviction/);
    // Its record evicted under it: the outcome write finds it gone and writes it again.
    const short = await startTask(gateway.mcpUrl, "sleep", { seconds: 1 });
    await command(redis.port, ["DEL", `${prefix}{t:${short}}`, `${prefix}{t:${short}}:lease`]);
    const restored = await ended([gateway.mcpUrl], short);
    expect(restored).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 1 s" }] } });
    expect(restored.statusMessage).toMatch(/record was lost by the task store while its call ran, and written again with its outcome/);
    // Everything flushed, the lease too: the owner's next renewal finds its lease unknown, checks its calls.
    const long = await startTask(gateway.mcpUrl, "sleep", { seconds: 60 });
    await command(redis.port, ["FLUSHALL"]);
    const lost = await ended([gateway.mcpUrl], long, 15_000);
    expect(lost).toMatchObject({ status: "failed", error: { code: -32603 } });
    expect(lost.statusMessage).toMatch(/record was lost by the task store while its call ran .*; the call was cancelled/);
    // The log line goes down the gateway's stderr pipe, which the poll that saw the task fail may outrun.
    const lostLines = () =>
      gateway
        .output()
        .split("\n")
        .filter((l) => l.includes('"level":"error"') && l.includes("lost the record of a task"));
    const errors = await waitFor(() => (lostLines().some((l) => l.includes(long)) ? lostLines() : undefined), {
      timeoutMs: 5_000,
      what: "the error line about the second lost record",
    }).catch(() => lostLines());
    expect(errors.some((l) => l.includes(short))).toBe(true);
    expect(errors.some((l) => l.includes(long))).toBe(true);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/taskgate_task_records_lost_total\{upstream="demo"\} 2/);
    // And it serves on.
    const after = await startTask(gateway.mcpUrl, "echo", { text: "after" });
    expect(await ended([gateway.mcpUrl], after)).toMatchObject({ status: "completed" });
  }, 60_000);
});

async function lagThenKill(redis: HaRedis, victim: number): Promise<{ killedAt: number }> {
  await cutReplication(victim);
  await new Promise((r) => setTimeout(r, 1_000));
  await redis.kill(victim);
  return { killedAt: Date.now() };
}

/** Polls one task on every gateway every 50 ms until stopped: what each answer was. */
function pollThroughout(urls: readonly string[]) {
  const answers: { status: number; wellFormed: boolean }[] = [];
  let running = true;
  const loop = (async () => {
    let taskId: string | undefined;
    while (running && !taskId) taskId = await startTask(urls[0]!, "sleep", { seconds: 60 }).catch(() => undefined);
    while (running && taskId) {
      for (const url of urls) {
        const res = await getTask(url, taskId).catch(() => undefined);
        if (!res) continue;
        const body = res.body;
        const wellFormed =
          body?.jsonrpc === "2.0" && ((res.status === 200 && body.result !== undefined) || (res.status === 503 && typeof body.error?.code === "number"));
        answers.push({ status: res.status, wellFormed });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (taskId) await modern(urls[0]!, "tasks/cancel", { taskId }, { capabilities: WITH_TASKS }).catch(() => undefined);
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return answers;
    },
  };
}

/** Half echo, a quarter deploy (a question to answer), a quarter sleep across the failover, some cancelled. */
function plan(i: number, random: () => number): Plan {
  if (i % 4 < 2) return { tool: "echo", args: { text: `echo ${i} ${random()}` } };
  if (i % 4 === 2) return { tool: "deploy", args: { service: `svc-${i}`, seconds: 0 }, confirm: true };
  const cancel = random() < 0.3;
  return { tool: "sleep", args: { seconds: 4, progressIntervalMs: 500 }, ...(cancel ? { cancelAfterMs: Math.floor(random() * 1_500) } : {}) };
}

function tally(outcomes: Outcome[]) {
  const counts = { acknowledged: outcomes.length, completed: 0, cancelled: 0, notEnded: [] as string[], wrong: [] as string[] };
  for (const o of outcomes) {
    const { status, result } = o.final;
    const text = result?.content?.[0]?.text;
    if (status === "not ended in time") counts.notEnded.push(`${o.taskId} ${o.plan.tool}: ${JSON.stringify(o.final.last).slice(0, 200)}`);
    else if (status === "cancelled" && o.cancelSent) counts.cancelled++;
    else if (status === "completed" && (o.plan.tool !== "echo" || text === o.plan.args.text)) counts.completed++;
    else counts.wrong.push(`${o.taskId} ${o.plan.tool}: ${JSON.stringify(o.final).slice(0, 300)}`);
  }
  return counts;
}
