import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";

const WINDOW_MS = 3000;
const REQUIRED = { taskSupport: "required" };

/** GET /api/overview, what the status page reads: from the all-tasks index on Redis, within admin.recentWindowMs. */
describe("the admin overview on Redis", () => {
  let gw: GatewayProcess;
  let adminUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    adminUrl = `http://127.0.0.1:${port}`;
    gw = await startGateway({
      store: { redisUrl: inject("redisUrl"), keyPrefix: uniquePrefix() },
      admin: { port, token: ADMIN_TOKEN, recentWindowMs: WINDOW_MS },
      tasks: { cancelGraceMs: 200 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { hang: REQUIRED, echo: REQUIRED, crash: REQUIRED, sleep: REQUIRED } }],
    });
  });
  afterAll(async () => gw?.stop());

  const start = async (name: string, args: Record<string, unknown> = {}) =>
    (await modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities: WITH_TASKS })).body.result.taskId as string;
  const overview = async () => (await admin(adminUrl, "/api/overview")).body;

  it("needs the admin token", async () => {
    expect((await admin(adminUrl, "/api/overview", { token: null })).status).toBe(401);
  });

  it("lists tasks in flight with progress, ended ones with their error, counts per upstream, and forgets ended ones past the window", async () => {
    const hanging = await start("hang");
    const sleeping = await start("sleep", { seconds: 30, progressIntervalMs: 100 });
    const [completed, failed] = [await start("echo", { text: "ok" }), await start("crash", { message: "no space left" })];
    const seen = await waitFor(
      async () => {
        const o = await overview();
        const sleeper = o.inFlight.find((t: any) => t.taskId === sleeping);
        return o.recent.length === 2 && sleeper?.progress ? o : undefined;
      },
      { timeoutMs: 10_000, what: "both ended tasks and a progress in the overview" },
    );
    expect(seen.windowMs).toBe(WINDOW_MS);
    expect(seen.truncated).toBe(false);
    expect(seen.counts).toEqual({ demo: { working: 2, completed: 1, failed: 1 } });
    expect(seen.inFlight.map((t: any) => t.taskId).sort()).toEqual([hanging, sleeping].sort());
    const sleeper = seen.inFlight.find((t: any) => t.taskId === sleeping);
    expect(sleeper.progress.total).toBe(30);
    expect(sleeper.progress.progress).toBeGreaterThan(0);
    expect(seen.recent.find((t: any) => t.taskId === completed)).toMatchObject({ status: "completed", error: null });
    expect(seen.recent.find((t: any) => t.taskId === failed)).toMatchObject({ status: "failed", error: expect.stringContaining("no space left") });

    // Past the window the ended tasks leave the overview (they are still there to read).
    await waitFor(async () => (await overview()).recent.length === 0, { timeoutMs: WINDOW_MS + 10_000, what: "the ended tasks to leave the window" });
    expect((await overview()).counts).toEqual({ demo: { working: 2 } });
    expect((await admin(adminUrl, `/api/tasks/${completed}`)).body.status).toBe("completed");
    for (const id of [hanging, sleeping]) expect((await admin(adminUrl, `/api/tasks/${id}/cancel`, { method: "POST" })).status).toBe(202);
  });
});
