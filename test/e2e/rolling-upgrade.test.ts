import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { STORE_FORMAT } from "../../src/store/format.js";
import { useCleanups } from "../helpers/cleanups.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { FORMAT_1_BUILD, PREVIOUS, previousBuild } from "../helpers/previous-build.js";
import { CLI, type GatewayProcess, startGateway } from "../helpers/processes.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";
import { ended, FAST_TASKS, replicaConfig, startTask, until } from "../helpers/replicas.js";

/** From SIGKILL to terminal: the lease runs out, then the next sweep (plus a takeover of the reaper's lock, plus slack). */
const REAPED_WITHIN_MS = FAST_TASKS.leaseMs + 2 * FAST_TASKS.reaperIntervalMs + 3_000;
const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };

/**
 * The previous version (test/helpers/previous-build.ts, built from the git history with its own
 * lockfile) beside this build on one Redis: what docs/operations/upgrading.md promises while a
 * Deployment rolls from one to the other.
 */
describe(`a rolling upgrade from ${PREVIOUS.commit.slice(0, 7)} (store format ${PREVIOUS.storeFormat}) to this build (format ${STORE_FORMAT})`, () => {
  const { track, defer } = useCleanups();
  let previous = "";
  // The first run on a machine builds it (npm ci and tsc), and the format 1 build below beside it; later runs reuse them.
  beforeAll(async () => void ([previous] = await Promise.all([previousBuild(), previousBuild(FORMAT_1_BUILD.commit)])), 600_000);

  /** One replica of each version on a fresh key prefix; `first` starts first. */
  async function pair(tasks: Record<string, unknown> = {}, first: "previous" | "current" = "previous") {
    const store = { redisUrl: redisUrl(), keyPrefix: uniquePrefix() };
    const start = (which: "previous" | "current") =>
      startGateway(replicaConfig(store, tasks), {}, which === "previous" ? join(previous, "dist/cli.js") : CLI).then((g) => track(g));
    const a = await start(first);
    const b = await start(first === "previous" ? "current" : "previous");
    const [old, current] = first === "previous" ? [a, b] : [b, a];
    return { old, current, prefix: store.keyPrefix };
  }

  it("records its format on a store the previous version uses, which goes on serving beside it", async () => {
    const { old, current, prefix } = await pair();
    const raw = new Redis(redisUrl());
    defer(() => raw.quit());
    expect(await raw.hgetall(`${prefix}{format}`)).toMatchObject({ format: String(PREVIOUS.storeFormat), oldest: String(PREVIOUS.storeFormat) });
    for (const g of [old, current]) expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
    expect(current.output()).toContain("store format checked");
  });

  for (const first of ["previous", "current"] as const) {
    it(`serves through either version the tasks made through the other: polled, answered, cancelled (${first} started first)`, async () => {
      const { old, current } = await pair({}, first);
      for (const [from, to] of [
        [old, current],
        [current, old],
      ] as [GatewayProcess, GatewayProcess][]) {
        const slept = await startTask(from.mcpUrl, "sleep", { seconds: 0.3 });
        const done = await until([to.mcpUrl], slept, (t) => t.status === "completed", 15_000, "completed");
        expect(done.result.content[0].text).toMatch(/slept/i);

        const deploy = await startTask(from.mcpUrl, "deploy", { service: "billing", seconds: 0.1 }, ELICIT);
        const waiting = await until([to.mcpUrl], deploy, (t) => t.status === "input_required", 15_000, "input_required");
        const [key] = Object.keys(waiting.inputRequests);
        const ack = await modern(
          to.mcpUrl,
          "tasks/update",
          { taskId: deploy, inputResponses: { [key!]: { action: "accept", content: { confirm: true } } } },
          { capabilities: WITH_TASKS },
        );
        expect(ack.body.result).toMatchObject({ resultType: "complete" });
        const deployed = await until([from.mcpUrl, to.mcpUrl], deploy, (t) => t.status === "completed", 15_000, "completed");
        expect(deployed.result.content[0].text).toContain("Deployed billing");

        const hung = await startTask(from.mcpUrl, "hang", {});
        await until([to.mcpUrl], hung, (t) => t.status === "working", 15_000, "working");
        expect((await modern(to.mcpUrl, "tasks/cancel", { taskId: hung }, { capabilities: WITH_TASKS })).body.result).toMatchObject({ resultType: "complete" });
        expect((await ended([from.mcpUrl, to.mcpUrl], hung)).status).toBe("cancelled");
      }
    });
  }

  for (const victim of ["previous", "current"] as const) {
    it(`ends the 5 calls of a SIGKILLed ${victim} replica on the other version within the lease, and runs again those safe to repeat`, async () => {
      // maxAttempts 2: sleep (read-only, idempotent) runs again; hang is cancelled or failed as the re-run rules say.
      const { old, current } = await pair({ maxAttempts: 2 });
      const [dying, living] = victim === "previous" ? [old, current] : [current, old];
      const rerun = await Promise.all([1, 2].map(() => startTask(dying.mcpUrl, "sleep", { seconds: 1 })));
      const cancelled = await startTask(dying.mcpUrl, "hang", {});
      const failed = await Promise.all([1, 2].map(() => startTask(dying.mcpUrl, "deploy", { service: "x", seconds: 30 }, ELICIT)));
      await until([living.mcpUrl], failed[1]!, (t) => t.status === "input_required", 15_000, "input_required");
      // A cancel the dying replica never confirms: the reaper ends the task cancelled.
      await dying.proc.kill("SIGSTOP");
      defer(() => void dying.proc.kill("SIGCONT"));
      await modern(living.mcpUrl, "tasks/cancel", { taskId: cancelled }, { capabilities: WITH_TASKS });
      await dying.stop("SIGKILL");
      // One deadline for all of them, from the kill: none is left working until its TTL (an hour).
      const deadline = Date.now() + REAPED_WITHIN_MS + 5_000;
      const left = () => Math.max(1, deadline - Date.now());
      for (const id of failed) {
        const task = await ended([living.mcpUrl], id, left());
        expect(task).toMatchObject({ status: "failed", error: { code: -32603 } });
        expect(task.statusMessage).toMatch(/stopped renewing its lease/);
      }
      expect(await ended([living.mcpUrl], cancelled, left())).toMatchObject({ status: "cancelled" });
      for (const id of rerun) {
        const task = await ended([living.mcpUrl], id, left());
        expect(task.status).toBe("completed");
        expect(task.result.content[0].text).toMatch(/slept/i);
      }
    });
  }

  it("takes the previous version's complete example configuration", () => {
    const out = execFileSync(process.execPath, [CLI, "check-config", join(previous, "config/taskgate.example.yaml")], { encoding: "utf8" });
    expect(out).toContain("taskgate.example.yaml: ok");
  });
});

/** A change that could not keep the previous version working (format 1 to 2): the refusal instead of a silent split. */
describe(`beside a build of store format ${FORMAT_1_BUILD.storeFormat} (${FORMAT_1_BUILD.commit.slice(0, 7)}), which this build cannot keep working`, () => {
  const { track } = useCleanups();
  let format1 = "";
  beforeAll(async () => void (format1 = await previousBuild(FORMAT_1_BUILD.commit)), 600_000);
  const statusOf = async (url: string) => (await fetch(`${url}/readyz`)).status;

  it("refuses to start while that build runs tasks on the store, naming both formats, and starts once they ended", async () => {
    const store = { redisUrl: redisUrl(), keyPrefix: uniquePrefix() };
    const old = track(await startGateway(replicaConfig(store), {}, join(format1, "dist/cli.js")));
    const hung = await startTask(old.mcpUrl, "hang", {});
    await expect(startGateway(replicaConfig(store))).rejects.toThrow(
      new RegExp(
        `holds 1 running task of store format 1 .*cannot run beside this replica \\(taskgate [^,]+, format ${STORE_FORMAT}\\).*Replace every replica at once`,
      ),
    );
    await modern(old.mcpUrl, "tasks/cancel", { taskId: hung }, { capabilities: WITH_TASKS });
    expect((await ended([old.mcpUrl], hung)).status).toBe("cancelled");
    const current = track(await startGateway(replicaConfig(store)));
    expect(await statusOf(current.url)).toBe(200);
  });

  it("stops taking calls while that build runs tasks beside it, and takes them again once they ended", async () => {
    const store = { redisUrl: redisUrl(), keyPrefix: uniquePrefix() };
    const current = track(await startGateway(replicaConfig(store)));
    const old = track(await startGateway(replicaConfig(store), {}, join(format1, "dist/cli.js")));
    const hung = await startTask(old.mcpUrl, "hang", {});
    await waitFor(async () => (await statusOf(current.url)) === 503, { timeoutMs: 15_000, what: "the current replica to refuse calls" });
    const refused = await modern(current.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 0 } }, { capabilities: WITH_TASKS });
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toContain("cannot work with the task store's format");
    expect(current.output()).toContain("refusing calls: the store");
    await modern(old.mcpUrl, "tasks/cancel", { taskId: hung }, { capabilities: WITH_TASKS });
    await waitFor(async () => (await statusOf(current.url)) === 200, { timeoutMs: 15_000, what: "the current replica to take calls again" });
    expect(await startTask(current.mcpUrl, "sleep", { seconds: 0 })).toBeTruthy();
  });
});
