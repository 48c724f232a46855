import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { TERMINAL, untilTask } from "../helpers/until.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * A task waits in its upstream's queue as long as its TTL allows, never failed by the queue's
 * own `queueTimeoutMs` (which bounds a plain call only). Durations are scaled down: the demo's
 * sleep takes seconds, and `queueTimeoutMs` is shorter than the queued tasks' wait.
 */
const sleepTask = async (url: string, seconds: number, label: string, principal?: string) => {
  const { body } = await modern(
    url,
    "tools/call",
    { name: "sleep", arguments: { seconds, label, progressIntervalMs: 60_000 } },
    { capabilities: WITH_TASKS, ...(principal ? { headers: as(principal) } : {}) },
  );
  if (body?.result?.resultType !== "task") throw new Error(`no task: ${JSON.stringify(body)}`);
  return body.result.taskId as string;
};

describe("a batch of tasks beyond the pool on the default configuration", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    // The defaults (poolSize 8, the quiet lane, optional tasks that detach), with detachAfterMs and
    // queueTimeoutMs scaled down so the queued tasks wait past queueTimeoutMs within seconds.
    gw = await startGateway({
      tasks: { detachAfterMs: 200, pollIntervalMs: 200 },
      upstreams: [{ name: "default", path: "/mcp", stdio: demoStdio(), queueTimeoutMs: 1_000 }],
    });
  });
  afterAll(async () => gw?.stop());

  it("runs 14 calls of 3 s to the end: the 6 beyond the pool wait past queueTimeoutMs, saying their place, and complete", async () => {
    const url = gw.mcpUrl;
    const ids = await Promise.all(Array.from({ length: 14 }, (_, i) => sleepTask(url, 3, `call-${i}`)));
    const seenQueued = new Set<string>();
    const ended = await Promise.all(
      ids.map((id) =>
        untilTask(
          url,
          id,
          (t) => {
            if (/^queued: \d+ ahead$/.test(t.statusMessage ?? "")) seenQueued.add(id);
            return TERMINAL.includes(t.status);
          },
          { timeoutMs: 30_000, what: "its end" },
        ),
      ),
    );
    expect(ended.map((t) => t.status)).toEqual(Array(14).fill("completed"));
    expect(ended.map((t) => t.result?.content?.[0]?.text).sort()).toEqual(ids.map((_, i) => `Slept 3 s (call-${i})`).sort());
    // Some waited for a slot and said so (the first 8 had one at once).
    expect(seenQueued.size).toBeGreaterThan(0);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/taskgate_upstream_queue_wait_seconds_bucket\{le="2.5",upstream="default"\} \d+/);
    expect(metrics).toMatch(/taskgate_upstream_queue_length\{upstream="default"\} 0/);
  });
});

describe("turns by principal, a cancel in the queue, and a plain call's bound", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      auth: bearerAuth("alice", "bob", "carol"),
      tasks: { detachAfterMs: 200, pollIntervalMs: 200, cancelGraceMs: 200 },
      upstreams: [
        {
          name: "one",
          path: "/mcp",
          stdio: demoStdio(),
          poolSize: 1,
          shareQuietCalls: false,
          queueTimeoutMs: 1_000,
          tools: { sleep: { taskSupport: "required" } },
        },
      ],
    });
  });
  afterAll(async () => gw?.stop());

  it("starts another principal's single call within one turn of a batch, drops a cancelled queued task at once, and bounds a plain call by queueTimeoutMs", async () => {
    const url = gw.mcpUrl;
    const first = await sleepTask(url, 1.5, "alice-running", "alice");
    await untilTask(url, first, (t) => t.status === "working", { headers: as("alice"), what: "working" });
    const batch: string[] = [];
    for (let i = 0; i < 5; i++) batch.push(await sleepTask(url, 0.6, `alice-${i}`, "alice"));
    const bob = await sleepTask(url, 0.6, "bob", "bob");
    // Behind alice's next call only, not behind her batch of 5.
    await untilTask(url, bob, (t) => t.statusMessage === "queued: 1 ahead", { headers: as("bob"), what: "bob's place" });
    // A queued task cancelled leaves the queue at once: it never runs.
    const cancelled = batch.pop() as string;
    await modern(url, "tasks/cancel", { taskId: cancelled }, { capabilities: WITH_TASKS, headers: as("alice") });
    const gone = await untilTask(url, cancelled, (t) => TERMINAL.includes(t.status), { headers: as("alice"), what: "cancelled" });
    expect(gone.status).toBe("cancelled");
    // A plain call (no tasks) waits behind them at most queueTimeoutMs, and says why it ends.
    const plain = await modern(url, "tools/call", { name: "echo", arguments: { message: "plain" } }, { headers: as("carol") });
    expect(plain.body.error?.message ?? JSON.stringify(plain.body)).toMatch(
      /upstream 'one' is busy: 1 calls were in flight and this one waited 1000 ms \(queueTimeoutMs\) without a free slot/,
    );
    const ends = new Map<string, any>();
    for (const [id, who] of [[first, "alice"], ...batch.map((b) => [b, "alice"]), [bob, "bob"]] as const)
      ends.set(id, await untilTask(url, id, (t) => TERMINAL.includes(t.status), { headers: as(who), timeoutMs: 20_000, what: "its end" }));
    expect([...ends.values()].map((t) => t.status)).toEqual(Array(6).fill("completed"));
    // Each waited longer than queueTimeoutMs; bob's ended right after alice's first queued one.
    const endedAt = (id: string) => new Date(ends.get(id).lastUpdatedAt).getTime();
    expect(endedAt(bob)).toBeGreaterThan(endedAt(batch[0]!));
    expect(endedAt(bob)).toBeLessThan(endedAt(batch[1]!));
    // Four of alice's queued calls and bob's ran; the cancelled one never reached the upstream.
    expect(gw.output().split("sleep started (0.6 s)").length - 1).toBe(5);
  });
});

describe("a long tool that never asks, on the quiet lane", () => {
  // The fixture's `quiet` tool waits for a file when told to (the test decides when a call ends) and answers with its pid.
  const FIXTURE = { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] };
  let gw: GatewayProcess;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskgate-long-lane-"));
    gw = await startGateway({ upstreams: [{ name: "fixture", path: "/mcp", stdio: FIXTURE, poolSize: 2 }] });
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shares one process once five runs alone ended cleanly asking nothing, however long they took, and calls queued to run alone move there", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    try {
      const slowFile = join(dir, "slow");
      const together = join(dir, "together");
      const waiting = (file: string, count: number) =>
        waitFor(
          () => {
            const pids = [...gw.output().matchAll(new RegExp(`quiet waits for ${file} in pid (\\d+)`, "g"))].map((m) => m[1]!);
            return pids.length >= count ? pids : undefined;
          },
          { timeoutMs: 15_000, what: `${count} calls waiting for ${file}` },
        );
      // Five runs alone: two at once (the pool), slower than a second, then three more.
      const slow = Array.from({ length: 5 }, () => client.callTool({ name: "quiet", arguments: { waitFile: slowFile } }));
      await waiting("slow", 2);
      // Six calls queue behind them to run alone, two at a time as things stand.
      const calls = Array.from({ length: 6 }, () => client.callTool({ name: "quiet", arguments: { waitFile: together } }));
      // The first two runs last over a second (a run's length no longer counts against it).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      writeFileSync(slowFile, "");
      await Promise.all(slow);
      // The fifth clean run made the tool quiet: the calls still queued left for the lane, so all six wait at once on two pool processes.
      const pids = await waiting("together", 6);
      writeFileSync(together, "");
      const ran = (await Promise.all(calls)).map((r) => /^pid (\d+)/.exec(textOf(r))?.[1]);
      expect(ran.sort()).toEqual([...pids].sort());
      const counts = [...new Set(pids)].map((pid) => pids.filter((p) => p === pid).length).sort();
      // At most one ran alone (it took a pool slot before the tool was quiet); the rest shared the lane's process.
      expect(counts.at(-1)).toBeGreaterThanOrEqual(5);
    } finally {
      await client.close();
    }
  });
});

describe("a task of the 2025-11-25 tasks and a handle of handle mode wait in the queue past queueTimeoutMs", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { detachAfterMs: 200, pollIntervalMs: 200, unawareClients: "handle" },
      // One process: the handle-mode call (which declares elicitation for its caller) is a third caller profile, past poolSize + 1: it waits its turn too.
      upstreams: [{ name: "one", path: "/mcp", stdio: demoStdio(), poolSize: 1, shareQuietCalls: false, queueTimeoutMs: 1_000 }],
    });
  });
  afterAll(async () => gw?.stop());

  it("runs both to the end behind a call that holds the slot longer than queueTimeoutMs, a caller profile of its own included", async () => {
    const legacy = (await connectClient(gw.mcpUrl)).client;
    const unaware = (await connectClient(gw.mcpUrl)).client;
    try {
      type Stream = AsyncGenerator<{ type: string; task?: { taskId: string }; result?: any; error?: unknown }>;
      const lastOf = async (stream: Stream) => {
        let last: { type: string; result?: any; error?: unknown } | undefined;
        for await (const message of stream) last = message;
        return last;
      };
      const stream = (seconds: number, label: string) =>
        legacy.experimental.tasks.callToolStream({ name: "sleep", arguments: { seconds, label } }, CallToolResultSchema, { task: {} }) as Stream;
      const holding = [lastOf(stream(2.5, "holds"))];
      await waitFor(() => gw.output().includes("sleep started (2.5 s)"), { what: "the slot to be taken" });
      const queued = lastOf(stream(0.3, "2025-11-25"));
      // Handle mode: a caller that declared no tasks gets a handle past detachAfterMs, and the result from the gateway's tool.
      const handle = (await unaware.callTool({ name: "sleep", arguments: { seconds: 0.3, label: "handle" } })) as any;
      const taskId = handle.structuredContent?.taskId as string;
      expect(taskId).toBeTruthy();
      const result = await waitFor(
        async () => {
          const r = (await unaware.callTool({ name: "taskgate_result", arguments: { taskId } })) as any;
          return /still running/.test(textOf(r)) || r.structuredContent?.taskId === taskId ? undefined : r;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: "the handle's result" },
      );
      expect(textOf(result)).toBe("Slept 0.3 s (handle)");
      expect((await queued)?.result?.content?.[0]?.text).toBe("Slept 0.3 s (2025-11-25)");
      for (const held of await Promise.all(holding)) expect(held?.result?.content?.[0]?.text).toBe("Slept 2.5 s (holds)");
    } finally {
      await Promise.all([legacy.close(), unaware.close()]);
    }
  });
});
