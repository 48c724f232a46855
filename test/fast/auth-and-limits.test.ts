import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { WITH_TASKS } from "../helpers/modern.js";
import { waitFor } from "../helpers/wait-for.js";

const REQUIRED = { taskSupport: "required" };

describe("auth, Host, Origin and per-principal limits (in process)", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await inProcessGateway({
      auth: bearerAuth("alice", "bob", "carol", "dave"),
      tasks: { cancelGraceMs: 50 },
      limits: { maxActiveTasksPerPrincipal: 2, taskRequestsPerSecond: 1, taskRequestBurst: 3, maxInputResponsesBytes: 1024, maxResultBytes: 2000 },
      upstreams: [{ name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" }, tools: { hang: REQUIRED, echo: REQUIRED, deploy: REQUIRED } }],
    });
  });
  afterAll(async () => gw?.close());

  const call = (who: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS) =>
    gw.modern(method, params, { capabilities, headers: as(who) });

  it("answers a missing or unknown token with 401, -32600 and a Bearer challenge", async () => {
    for (const headers of [{}, { authorization: "Bearer tok-mallory" }, { authorization: "Basic YTpi" }]) {
      const res = await gw.modern("server/discover", {}, { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe(-32600);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="taskgate"/);
    }
    expect((await call("alice", "server/discover", {})).status).toBe(200);
  });

  it("answers a Host that is not a loopback name with 403 (DNS rebinding), and a foreign Origin with 403", async () => {
    const rebound = await gw.send(
      new Request("http://evil.example/mcp", { method: "POST", headers: { ...as("alice"), "content-type": "application/json" }, body: "{}" }),
    );
    expect(rebound.status).toBe(403);
    expect(((await rebound.json()) as any).error.message).toContain("Host not allowed");
    const foreign = await gw.modern("server/discover", {}, { headers: { ...as("alice"), origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: -32600, message: expect.stringContaining("Origin not allowed") });
  });

  it("reads another principal's task exactly like an unknown one", async () => {
    const taskId = (await call("alice", "tools/call", { name: "hang", arguments: {} })).body.result.taskId;
    const foreign = await call("bob", "tasks/get", { taskId });
    const unknown = await call("bob", "tasks/get", { taskId: "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx" });
    expect(foreign.body.error).toEqual(unknown.body.error);
    expect(foreign.body.error).toMatchObject({ code: -32602 });
    await call("alice", "tasks/cancel", { taskId });
  });

  it("refuses a task past maxActiveTasksPerPrincipal with 429, per principal, until one ends", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await call("carol", "tools/call", { name: "hang", arguments: {} })).body.result.taskId);
    const refused = await call("carol", "tools/call", { name: "hang", arguments: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: -32000, message: expect.stringContaining("Too many active tasks") });
    await call("carol", "tasks/cancel", { taskId: ids[0] });
    await waitFor(async () => (await call("carol", "tools/call", { name: "hang", arguments: {} })).status === 200, {
      what: "a slot freed by the cancelled task",
    });
  });

  it("fails a task whose result is over maxResultBytes, saying so", async () => {
    const created = (await call("dave", "tools/call", { name: "echo", arguments: { text: "x".repeat(3000) } })).body.result;
    const ended = await waitFor(
      async () => {
        const t = (await call("dave", "tasks/get", { taskId: created.taskId })).body.result;
        return t?.status === "working" ? undefined : t;
      },
      { intervalMs: 1_100, what: "the echo task to end" },
    );
    expect(ended).toMatchObject({ status: "failed", error: { code: -32603, message: expect.stringContaining("limits.maxResultBytes") } });
  });

  it("rate-limits tasks/* per principal with 429, -32000 and Retry-After; others are not affected", async () => {
    // Each call takes a token of bob's bucket (3, refilled at 1/s): a few calls in a row empty it.
    const limited = await waitFor(
      async () => {
        const res = await call("bob", "tasks/get", { taskId: "anything" });
        return res.status === 429 ? res : undefined;
      },
      { intervalMs: 1, what: "bob's bucket to run dry" },
    );
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(limited.body.error).toMatchObject({ code: -32000 });
    expect((await call("alice", "tasks/get", { taskId: "anything" })).status).toBe(200);
  });
});
