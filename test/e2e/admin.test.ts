import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, ADMIN_TOKEN, legacyTask } from "../helpers/admin.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { CLI, demoStdio, runNode, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { uniquePrefix } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-for.js";

/** Runs `taskgate tasks …` to its end; resolves with its exit code and output. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = runNode([CLI, "tasks", ...args], { TASKGATE_ADMIN_TOKEN: "", TASKGATE_ADMIN_URL: "", ...env });
  const code = await new Promise<number | null>((resolve) => run.proc.once("exit", (c) => resolve(c)));
  return { code, output: run.output() };
}

describe("the admin API on its own listener, and `taskgate tasks`", () => {
  let gw: GatewayProcess;
  let adminUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    adminUrl = `http://127.0.0.1:${port}`;
    gw = await startGateway(
      {
        store: { redisUrl: inject("redisUrl"), keyPrefix: uniquePrefix() },
        admin: { port },
        tasks: { cancelGraceMs: 200 },
        upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { hang: { taskSupport: "required" }, echo: { taskSupport: "required" } } }],
      },
      { TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN },
    );
  });
  afterAll(async () => gw?.stop());

  it("refuses a missing or wrong token with 401 and a Bearer challenge, and is not on the clients' port", async () => {
    for (const token of [null, "wrong-token-wrong-token"]) {
      const res = await admin(adminUrl, "/api/tasks", { token });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    }
    expect((await fetch(`${gw.url}/api/tasks`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(404);
  });

  it("lists tasks of every principal by status, upstream and tool; shows one; cancels one", async () => {
    const legacyHang = await legacyTask(gw.mcpUrl, "hang");
    const modernHang = (await modern(gw.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result.taskId as string;
    const echoed = (await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { capabilities: WITH_TASKS })).body.result
      .taskId as string;
    await waitFor(async () => (await admin(adminUrl, `/api/tasks/${echoed}`)).body.status === "completed", { what: "echo to complete" });

    const working = (await admin(adminUrl, "/api/tasks?status=working,input_required&upstream=demo&tool=hang")).body.tasks;
    expect(working.map((t: any) => t.taskId).sort()).toEqual([legacyHang, modernHang].sort());
    expect(new Set(working.map((t: any) => t.principal)).size).toBe(2);
    expect((await admin(adminUrl, "/api/tasks?status=completed")).body.tasks.map((t: any) => t.taskId)).toEqual([echoed]);
    expect((await admin(adminUrl, "/api/tasks?upstream=other")).body.tasks).toEqual([]);
    expect((await admin(adminUrl, "/api/tasks?status=sleeping")).status).toBe(400);

    const one = await admin(adminUrl, `/api/tasks/${echoed}`);
    expect(one.body).toMatchObject({
      taskId: echoed,
      status: "completed",
      upstream: "demo",
      tool: "echo",
      taskProtocol: "extension",
      outcome: { result: { content: [{ text: expect.stringContaining("hi") }] } },
    });
    expect((await admin(adminUrl, "/api/tasks/01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx")).status).toBe(404);

    // The 2025-11-25 tasks: cancelled before the answer (the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks). The tasks extension: cooperative, cancelled once the owner stops the call.
    const a = await admin(adminUrl, `/api/tasks/${legacyHang}/cancel`, { method: "POST" });
    expect(a).toMatchObject({ status: 202, body: { task: { taskId: legacyHang, status: "cancelled" } } });
    expect((await admin(adminUrl, `/api/tasks/${modernHang}/cancel`, { method: "POST" })).status).toBe(202);
    await waitFor(async () => (await admin(adminUrl, `/api/tasks/${modernHang}`)).body.status === "cancelled", {
      what: "the tasks-extension task to be cancelled",
    });
    expect((await admin(adminUrl, `/api/tasks/${echoed}/cancel`, { method: "POST" })).status).toBe(409);
  });

  it("serves `taskgate tasks list|get|cancel` from the command line", async () => {
    const taskId = (await modern(gw.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result.taskId as string;
    const env = { TASKGATE_ADMIN_URL: adminUrl, TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN };

    const list = await cli(["list", "--status", "working", "--tool", "hang"], env);
    expect(list.code).toBe(0);
    expect(list.output).toMatch(/^TASK\s+STATUS\s+UPSTREAM\s+TOOL/);
    expect(list.output).toMatch(new RegExp(`${taskId}\\s+working\\s+demo\\s+hang`));

    const got = await cli(["get", taskId, "--admin-url", adminUrl, "--token", ADMIN_TOKEN]);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.output)).toMatchObject({ taskId, status: "working", tool: "hang" });

    expect((await cli(["cancel", taskId], env)).code).toBe(0);
    await waitFor(async () => (await admin(adminUrl, `/api/tasks/${taskId}`)).body.status === "cancelled", { what: "the task to be cancelled" });

    expect(await cli(["get", "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx"], env)).toMatchObject({ code: 1, output: expect.stringContaining("404") });
    expect(await cli(["list"], { TASKGATE_ADMIN_URL: adminUrl, TASKGATE_ADMIN_TOKEN: "wrong-token-wrong-token" })).toMatchObject({
      code: 1,
      output: expect.stringContaining("401"),
    });
    expect(await cli(["list"], { TASKGATE_ADMIN_URL: adminUrl })).toMatchObject({ code: 2, output: expect.stringContaining("admin token") });
    expect((await cli(["frobnicate"], env)).code).toBe(2);
  });
});
