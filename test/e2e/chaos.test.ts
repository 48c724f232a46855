import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { drive, seeded, type Outcome, type Plan } from "../helpers/load.js";
import { childPids, demoStdio, startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { startRedis, type RedisProcess } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { ended, startTask } from "../helpers/replicas.js";

const TASKS = 200;
const TOOLS = { echo: { taskSupport: "required" }, deploy: { taskSupport: "required" }, sleep: { taskSupport: "required" }, hang: { taskSupport: "required" } };
/**
 * The default lease: far longer than a Redis restart even on a loaded machine, so owners keep
 * their calls through it (an outage longer than leaseMs abandons them: docs/operations/failure-modes.md).
 */
const TASK_CONFIG = { detachAfterMs: 200, cancelGraceMs: 300, pollIntervalMs: 300, leaseMs: 15_000, reaperIntervalMs: 500 };

describe("chaos on real processes: three taskgate replicas, one Redis with AOF", () => {
  let dir: string;
  let redis: RedisProcess;
  let demo: RunningProcess & { mcpUrl: string };
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "taskgate-chaos-"));
    redis = await startRedis({ appendonly: true, dir });
    demo = await startDemoHttp();
    const store = { redisUrl: redis.url, keyPrefix: "chaos:" };
    const config = { store, tasks: TASK_CONFIG, upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.mcpUrl }, tools: TOOLS }] };
    gateways = await Promise.all([1, 2, 3].map(() => startGateway(config)));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    await demo?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it(`delivers ${TASKS} concurrent tasks byte-equal or cancelled as asked, through random cancels, input answers and a Redis crash`, async () => {
    const seed = Date.now() % 1_000_000;
    const random = seeded(seed);
    const plans = Array.from({ length: TASKS }, (_, i) => plan(i, random));
    const expected = await directResults(demo.mcpUrl, plans);
    const urls = gateways.map((g) => g.mcpUrl);
    const deadline = Date.now() + 90_000;
    let acknowledged = 0;
    let finished = 0;
    let restarted: Promise<void> | undefined;
    // Halfway through the acknowledgements, Redis is killed and started again from its AOF.
    const onAck = () => {
      if (++acknowledged === TASKS / 2) restarted = restartRedis();
    };
    let outageMs = 0;
    /** Tasks acknowledged but not yet ended when Redis was killed, and tasks ended before it was back. */
    let crash: { inFlight: number; finishedBeforeUp: number } | undefined;
    const restartRedis = async () => {
      const down = Date.now();
      const inFlight = acknowledged - finished;
      await redis.stop("SIGKILL");
      redis = await startRedis({ appendonly: true, dir, port: redis.port });
      outageMs = Date.now() - down;
      crash = { inFlight, finishedBeforeUp: finished };
    };
    const outcomes = await Promise.all(
      plans.map((p, i) =>
        drive(urls, p, seeded(seed + i + 1), deadline, onAck).then((o) => {
          finished++;
          return o;
        }),
      ),
    );
    await restarted;

    const counts = tally(outcomes, expected);
    console.log(`chaos run (seed ${seed}, Redis down for ${outageMs} ms, ${JSON.stringify(crash)}): ${JSON.stringify(counts)}`);
    if (counts.mismatched.length) {
      const stuck = outcomes.filter((o) => o.final.status === "not ended in time").map((o) => o.taskId);
      for (const g of gateways)
        console.log(
          g
            .output()
            .split("\n")
            .filter((l) => /"level":[45]0/.test(l) || stuck.some((id) => l.includes(id)))
            .slice(0, 40)
            .join("\n"),
        );
    }
    // The crash came while acknowledged tasks were running, and some ended only after Redis was back.
    expect(crash?.inFlight).toBeGreaterThan(0);
    expect(crash?.finishedBeforeUp).toBeLessThan(TASKS);
    expect(counts.mismatched).toEqual([]);
    // Each acknowledgement is a task of its own: no two calls were handed the same task.
    expect(counts.handles).toBe(TASKS);
    expect(counts.byteEqual + counts.cancelled).toBe(TASKS);
    expect(counts.cancelled).toBeGreaterThan(0);
    expect(counts.answered).toBeGreaterThan(0);
  }, 150_000);

  it("fails the tasks of an upstream process killed mid-call with a clear message, and serves later calls", async () => {
    const store = { redisUrl: redis.url, keyPrefix: "chaos-upstream:" };
    const gateway = await startGateway({ store, tasks: TASK_CONFIG, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: TOOLS }] });
    gateways.push(gateway);
    const ids = await Promise.all([1, 2, 3].map(() => startTask(gateway.mcpUrl, "hang", {})));
    // Each call runs on a pooled process of its own (isolation: pool), beside the home process: kill them all.
    const upstreams = await waitFor(
      () => {
        const pids = childPids(gateway.proc.pid!);
        return pids.length > ids.length ? pids : undefined;
      },
      { timeoutMs: 15_000, what: "a process for each call besides the home process" },
    );
    for (const pid of upstreams) process.kill(pid, "SIGKILL");
    for (const id of ids) {
      const task = await ended([gateway.mcpUrl], id);
      expect(task).toMatchObject({ status: "failed", error: { code: -32603 } });
      // Killed mid-call, or while its process was starting: either way the process exited.
      expect(task.statusMessage).toMatch(/upstream 'demo' failed: (cannot start upstream 'demo': )?upstream process exited/);
    }
    // The upstream is restarted with backoff; once /readyz says so, calls work again.
    await waitFor(async () => (await fetch(`${gateway.url}/readyz`)).ok, { timeoutMs: 15_000, what: "the upstream restarted" });
    const later = await startTask(gateway.mcpUrl, "echo", { text: "after the crash" });
    expect(await ended([gateway.mcpUrl], later)).toMatchObject({ status: "completed", result: { content: [{ text: "after the crash" }] } });
  });
});

/** One third each: echo of random text, deploy with a question to answer, sleep that half the time gets cancelled. */
function plan(i: number, random: () => number): Plan {
  if (i % 3 === 0) {
    const text = `echo ${i} ${'é✓\u{1F680}"\\\n'.repeat(Math.floor(random() * 50))}${random()}`;
    return { tool: "echo", args: { text } };
  }
  if (i % 3 === 1) return { tool: "deploy", args: { service: `svc-${i}`, seconds: 0 }, confirm: random() < 0.7 };
  const cancel = random() < 0.5;
  // Long enough to outlive the Redis crash: it comes right after the burst of acknowledgements, so
  // a planned cancel is written only once Redis is back (outages of 0.6–2.7 s seen under a full
  // suite). With 3 s sleeps, a 2.7 s outage let every sleep finish before its cancel landed.
  return { tool: "sleep", args: { seconds: 6, progressIntervalMs: 500 }, ...(cancel ? { cancelAfterMs: Math.floor(random() * 1_500) } : {}) };
}

/**
 * What the upstream itself returns for each plan, asked directly with the real SDK client (its
 * answer to deploy's question from the plan). Kept as the JSON text it arrived as, key order and all.
 */
async function directResults(mcpUrl: string, plans: Plan[]): Promise<string[]> {
  const confirmOf = new Map(plans.filter((p) => p.tool === "deploy").map((p) => [`Deploy ${String(p.args.service)}?`, p.confirm === true]));
  const client = new Client({ name: "chaos-direct", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => ({ action: "accept", content: { confirm: confirmOf.get(req.params.message) ?? false } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  try {
    // One at a time (the deploy questions need no attribution guesswork), once per distinct call.
    const byCall = new Map<string, string>();
    for (const p of plans) {
      const key = JSON.stringify([p.tool, p.args, p.confirm]);
      if (!byCall.has(key))
        byCall.set(key, JSON.stringify(await client.request({ method: "tools/call", params: { name: p.tool, arguments: p.args } }, z.looseObject({}))));
    }
    return plans.map((p) => byCall.get(JSON.stringify([p.tool, p.args, p.confirm]))!);
  } finally {
    await client.close();
  }
}

function tally(outcomes: Outcome[], expected: string[]) {
  const counts = {
    handles: new Set(outcomes.map((o) => o.taskId)).size,
    byteEqual: 0,
    cancelled: 0,
    completedDespiteCancel: 0,
    answered: 0,
    mismatched: [] as string[],
  };
  outcomes.forEach((o, i) => {
    const { resultType, ...result } = o.final.result ?? {};
    if (o.final.status === "cancelled" && o.cancelSent) counts.cancelled++;
    else if (o.final.status === "completed" && resultType === "complete" && JSON.stringify(result) === expected[i]) {
      counts.byteEqual++;
      if (o.plan.tool === "deploy") counts.answered++;
      if (o.cancelSent) counts.completedDespiteCancel++;
    } else counts.mismatched.push(`${o.taskId} ${o.plan.tool}: ${JSON.stringify(o.final).slice(0, 300)} vs ${expected[i]?.slice(0, 200)}`);
  });
  return counts;
}
