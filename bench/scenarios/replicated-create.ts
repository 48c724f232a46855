import { tmpdir } from "node:os";
import { round } from "../lib/load.js";
import { startRedis, type BenchRedis } from "../lib/redis.js";
import type { Scenario } from "../lib/result.js";
import { demoStdio, startGateway, type Server } from "../lib/servers.js";
import { createTask } from "../lib/tasks.js";
import { waitFor } from "../lib/wait.js";

const CONCURRENCY = 16;
/** Calls per slice at one connection; the two gateways take turns, slice by slice. */
const SLICE = 200;

/**
 * w. What waiting for a replica costs a task creation: a primary with one replica in sync, and two
 * gateways on it that differ only in store.waitForReplicas, the default (WAIT for the listed
 * replica) and 0 (answer once the primary has it). Measured in turns in the same run: latency at
 * one connection, then creations per second at CONCURRENCY connections.
 */
export const replicatedCreate: Scenario = {
  id: "w",
  title: "task creation with WAIT for a replica vs without (a primary and one replica, required tool)",
  goals: {},
  async run(ctx, out) {
    const redis: BenchRedis[] = [];
    const servers: Server[] = [];
    try {
      // Replication writes an RDB file for the full sync: into the temporary directory, not the checkout.
      const dir = ["--dir", tmpdir()];
      const primary = await startRedis(dir);
      redis.push(primary);
      redis.push(await startRedis([...dir, "--replicaof", "127.0.0.1", new URL(primary.url).port]));
      await waitFor(async () => /state=online/.test(await primary.client.info("replication")), "the replica in sync");
      const gateway = (waitForReplicas: "listed" | number) =>
        startGateway({
          store: { redisUrl: primary.url, keyPrefix: `bench-w-${waitForReplicas}:`, waitForReplicas },
          tasks: { pollIntervalMs: 1000 },
          upstreams: [demoStdio({ echo: { taskSupport: "required" } })],
        });
      const waiting = await gateway("listed");
      const plain = await gateway(0);
      servers.push(waiting, plain);
      const rows = { "WAIT for the replica (default)": waiting, "waitForReplicas: 0": plain };
      const latencies = new Map<string, number[]>(Object.keys(rows).map((k) => [k, []]));
      for (let turn = 0; turn < ctx.rounds * 2; turn++) {
        for (const [name, server] of Object.entries(rows)) latencies.get(name)!.push(...(await oneAtATime(server.url, SLICE)));
      }
      const rates = new Map<string, number>();
      for (const [name, server] of Object.entries(rows)) rates.set(name, await createsPerSecond(server.url, Math.min(ctx.load.durationS, 5) * 1000));
      for (const [name, samples] of latencies) {
        out.figure(`${name}: create p50 ms (one connection)`, round(percentile(samples, 0.5), 3));
        out.figure(`${name}: create p99 ms (one connection)`, round(percentile(samples, 0.99), 3));
        out.figure(`${name}: creates per second (${CONCURRENCY} connections)`, round(rates.get(name) ?? 0, 0));
      }
      const [withWait, without] = [...latencies.values()];
      out.figure("added p50 latency of WAIT, ms", round(percentile(withWait!, 0.5) - percentile(without!, 0.5), 3));
      const [rateWith, rateWithout] = [...rates.values()];
      if (rateWith && rateWithout) out.figure("creates per second with WAIT / without", round(rateWith / rateWithout, 2));
      out.note(
        "Both gateways run at once against the same primary and replica, and take turns slice by slice, so a change of machine load shows in both rows.",
      );
    } finally {
      await Promise.all(servers.map((s) => s.proc.stop()));
      await Promise.all(redis.map((r) => r.close()));
    }
  },
};

let seq = 0;

async function oneAtATime(url: string, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await createTask(url, "echo", { text: "w" }, `w-${seq++}`);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function createsPerSecond(url: string, windowMs: number): Promise<number> {
  let done = 0;
  const deadline = Date.now() + windowMs;
  const lane = async () => {
    while (Date.now() < deadline) {
      await createTask(url, "echo", { text: "w" }, `w-${seq++}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return done / (windowMs / 1000);
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}
