import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { ended, FAST_TASKS, startTask, until } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/** From SIGKILL to another replica resuming the stream: the lease runs out, then a sweep (and slack). */
const RESUMED_WITHIN_MS = FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 5_000;
const TOOLS = { sleep: { taskSupport: "required" }, hang: { taskSupport: "required" }, deploy: { taskSupport: "required" } };
const RESUMED = /another replica resumed its response stream/;

type Demo = RunningProcess & { mcpUrl: string; port: number };

/** How often the demo server started a tool (its own log lines on stderr). */
const runs = (demo: Demo, tool: "sleep" | "hang" | "deploy") => demo.output().split(`${tool} started`).length - 1;

function replicaOf(demo: Demo, keyPrefix: string): Promise<GatewayProcess> {
  const store = { redisUrl: inject("redisUrl"), keyPrefix };
  return startGateway({ store, tasks: FAST_TASKS, upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.mcpUrl }, tools: TOOLS }] });
}

const prefix = () => `t${randomBytes(4).toString("hex")}:`;

/**
 * The owner wrote where the call's stream can be resumed (the task hash, store/redis/keys.ts): a
 * call that shows no progress gives no other sign, and one killed before this write fails as
 * before (nothing to resume from).
 */
async function positionStored(keyPrefix: string, taskId: string): Promise<void> {
  const redis = new Redis(inject("redisUrl"), { lazyConnect: true });
  try {
    await redis.connect();
    await waitFor(async () => (await redis.hget(`${keyPrefix}{t:${taskId}}`, "lastEventId")) !== null, { what: "the stream position in the task" });
  } finally {
    redis.disconnect();
  }
}

describe("an HTTP upstream with an event store: a call outlives the replica that made it", () => {
  let demo: Demo;
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    demo = await startDemoHttp(["--event-store"]);
  });
  afterAll(async () => demo?.stop());
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    gateways = [];
  });

  it("resumes the stream on another replica after a SIGKILL: the upstream's own result, the tool run once", async () => {
    const keyPrefix = prefix();
    const [a, b] = (gateways = await Promise.all([replicaOf(demo, keyPrefix), replicaOf(demo, keyPrefix)])) as [GatewayProcess, GatewayProcess];
    const before = runs(demo, "sleep");
    // One call still running when the stream is resumed, one that ends while nobody reads its stream.
    const long = await startTask(a.mcpUrl, "sleep", { seconds: 5, progressIntervalMs: 200 });
    const short = await startTask(a.mcpUrl, "sleep", { seconds: 1.2, progressIntervalMs: 200 });
    await until([a.mcpUrl], long, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress of the long call");
    await until([a.mcpUrl], short, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress of the short call");
    await a.stop("SIGKILL");
    const resumed = await until([b.mcpUrl], long, (t) => RESUMED.test(t.statusMessage ?? "") || /Slept/.test(t.statusMessage ?? ""), RESUMED_WITHIN_MS);
    expect(resumed.status).toBe("working");
    for (const [id, text] of [
      [long, "Slept 5 s"],
      [short, "Slept 1.2 s"],
    ] as const) {
      const done = await ended([b.mcpUrl], id, RESUMED_WITHIN_MS + 10_000);
      expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text }] } });
    }
    expect(runs(demo, "sleep")).toBe(before + 2);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(metrics).toMatch(/taskgate_reaper_actions_total\{action="resumed"\} 2/);
    expect(metrics).not.toMatch(/taskgate_reaper_actions_total\{action="failed"\} [1-9]/);
  });

  it("hands a resumable call to another replica at SIGTERM, leaving it running upstream in its session", async () => {
    const keyPrefix = prefix();
    const [a, b] = (gateways = await Promise.all([replicaOf(demo, keyPrefix), replicaOf(demo, keyPrefix)])) as [GatewayProcess, GatewayProcess];
    const before = runs(demo, "sleep");
    const cancelledBefore = demo.output().split("sleep cancelled").length;
    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 4, progressIntervalMs: 200 });
    await until([a.mcpUrl], taskId, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress");
    await a.stop("SIGTERM");
    expect(a.proc.exitCode).toBe(0);
    const done = await ended([b.mcpUrl], taskId, RESUMED_WITHIN_MS + 5_000);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 4 s" }] } });
    expect(runs(demo, "sleep")).toBe(before + 1);
    expect(demo.output().split("sleep cancelled").length).toBe(cancelledBefore);
  });

  it("carries out on the resuming replica a cancel the owner had passed upstream before a SIGTERM handed the call over", async () => {
    const keyPrefix = prefix();
    // a gives a result 10 s to win after a cancel, so its drain (300 ms) hands the call over first.
    const a = await startGateway({
      store: { redisUrl: inject("redisUrl"), keyPrefix },
      tasks: { ...FAST_TASKS, cancelGraceMs: 10_000 },
      upstreams: [{ name: "demo", path: "/mcp", http: { url: demo.mcpUrl }, tools: TOOLS }],
    });
    const b = await replicaOf(demo, keyPrefix);
    gateways = [a, b];
    const cancelledBefore = demo.output().split("sleep cancelled").length;
    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 30, progressIntervalMs: 200 });
    await positionStored(keyPrefix, taskId);
    await modern(b.mcpUrl, "tasks/cancel", { taskId }, { capabilities: WITH_TASKS });
    // The upstream stopped the call: it will never answer it, on any stream.
    await waitFor(() => demo.output().split("sleep cancelled").length > cancelledBefore, { what: "the upstream to see a's cancel" });
    await a.stop("SIGTERM");
    expect(a.output()).toContain("drain period over: handed over the calls still running");
    const done = await ended([b.mcpUrl], taskId, RESUMED_WITHIN_MS + 5_000);
    expect(done.status).toBe("cancelled");
  });

  it("asks again on the resuming replica a question that was open when the owner stopped, and takes its answer there", async () => {
    const keyPrefix = prefix();
    const [a, b] = (gateways = await Promise.all([replicaOf(demo, keyPrefix), replicaOf(demo, keyPrefix)])) as [GatewayProcess, GatewayProcess];
    const before = runs(demo, "deploy");
    const capabilities = { ...WITH_TASKS, elicitation: { form: {} } };
    const taskId = await startTask(a.mcpUrl, "deploy", { service: "billing", seconds: 0.5 }, capabilities);
    const first = await until([a.mcpUrl], taskId, (t) => t.status === "input_required", 10_000, "the question on a");
    await a.stop("SIGKILL");
    // The claim withdrew a's question; the replayed stream asks it again, under a new key.
    const again = await until(
      [b.mcpUrl],
      taskId,
      (t) => t.status === "input_required" && Object.keys(t.inputRequests).some((k) => !(k in first.inputRequests)),
      RESUMED_WITHIN_MS,
      "the question asked again on b",
    );
    const [key] = Object.keys(again.inputRequests);
    expect(again.inputRequests[key!]).toMatchObject({ method: "elicitation/create", params: { message: "Deploy billing?" } });
    await modern(
      b.mcpUrl,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { confirm: true } } } },
      { capabilities: WITH_TASKS },
    );
    const done = await ended([b.mcpUrl], taskId);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Deployed billing" }] } });
    expect(runs(demo, "deploy")).toBe(before + 1);
  });

  it("cancels a resumed call upstream, in the session it runs in", async () => {
    const keyPrefix = prefix();
    const [a, b] = (gateways = await Promise.all([replicaOf(demo, keyPrefix), replicaOf(demo, keyPrefix)])) as [GatewayProcess, GatewayProcess];
    const cancelledBefore = demo.output().split("hang cancelled").length;
    const taskId = await startTask(a.mcpUrl, "hang", {});
    await waitFor(() => runs(demo, "hang") > 0, { what: "the upstream to start hanging" });
    await positionStored(keyPrefix, taskId);
    await a.stop("SIGKILL");
    await until([b.mcpUrl], taskId, (t) => RESUMED.test(t.statusMessage ?? ""), RESUMED_WITHIN_MS, "b to resume the stream");
    await modern(b.mcpUrl, "tasks/cancel", { taskId }, { capabilities: WITH_TASKS });
    expect((await ended([b.mcpUrl], taskId)).status).toBe("cancelled");
    await waitFor(() => demo.output().split("hang cancelled").length > cancelledBefore, { what: "the upstream to see the cancel" });
  });
});

describe("a resume the upstream cannot serve, and an upstream without event ids", () => {
  const demos: Demo[] = [];
  let gateways: GatewayProcess[] = [];
  afterEach(async () => {
    await Promise.all(gateways.map((g) => g.stop("SIGKILL")));
    await Promise.all(demos.splice(0).map((d) => d.stop("SIGKILL")));
    gateways = [];
  });

  it("fails the task saying the upstream forgot the session, when it restarted meanwhile", async () => {
    const keyPrefix = prefix();
    const first = await startDemoHttp(["--event-store"]);
    demos.push(first);
    const a = await replicaOf(first, keyPrefix);
    gateways = [a];
    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 60, progressIntervalMs: 200 });
    await until([a.mcpUrl], taskId, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress");
    await a.stop("SIGKILL");
    await first.stop("SIGKILL");
    // The same address, a new process: no session and no event of the first one.
    const again = await startDemoHttp(["--event-store"], first.port);
    demos.push(again);
    const b = await replicaOf(again, keyPrefix);
    gateways = [b];
    const failed = await ended([b.mcpUrl], taskId, RESUMED_WITHIN_MS);
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: -32603, message: expect.stringMatching(/no longer knows the session the call ran in \(HTTP 404\)/) },
    });
    expect(failed.statusMessage).not.toMatch(/replica running this call stopped/);
    expect(runs(again, "sleep")).toBe(0);
  });

  it("keeps today's rule for an upstream that gives no event ids: the task fails, nothing is resumed", async () => {
    const keyPrefix = prefix();
    const plain = await startDemoHttp();
    demos.push(plain);
    const [a, b] = (gateways = await Promise.all([replicaOf(plain, keyPrefix), replicaOf(plain, keyPrefix)])) as [GatewayProcess, GatewayProcess];
    const taskId = await startTask(a.mcpUrl, "sleep", { seconds: 60, progressIntervalMs: 200 });
    await until([a.mcpUrl], taskId, (t) => /Slept/.test(t.statusMessage ?? ""), 10_000, "progress");
    await a.stop("SIGKILL");
    const failed = await ended([b.mcpUrl], taskId, RESUMED_WITHIN_MS);
    expect(failed).toMatchObject({ status: "failed", statusMessage: expect.stringMatching(/replica running this call stopped/) });
    expect(runs(plain, "sleep")).toBe(1);
  });
});
