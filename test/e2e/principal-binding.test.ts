import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, auditHash, bearerAuth, errorOf, legacy, openSessionAs } from "../helpers/auth.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

/** A task id of the same shape as a real one, that nobody holds. */
const unknownId = () => `01ZZZZZZZZ${randomBytes(16).toString("base64url")}`;

describe("only the caller sees its tasks (bearer auth, both task protocols)", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` },
      auth: bearerAuth("alice", "bob"),
      tasks: { pollIntervalMs: 500, cancelGraceMs: 200 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { hang: { taskSupport: "required" }, echo: { taskSupport: "required" } } }],
    });
  });
  afterAll(async () => gw?.stop());

  const modernAs = (who: string, method: string, params: Record<string, unknown>) =>
    modern(gw.mcpUrl, method, params, { capabilities: WITH_TASKS, headers: as(who) });

  it("answers 401 with a WWW-Authenticate challenge without credentials or with a bad token; health needs none", async () => {
    for (const [headers, challenge] of [
      [{}, 'Bearer realm="taskgate"'],
      [as("mallory"), 'Bearer realm="taskgate", error="invalid_token", error_description="unknown token"'],
      [{ authorization: "Basic Ym9iOng=" }, expect.stringContaining('error="invalid_request"')],
    ] as const) {
      const res = await modern(gw.mcpUrl, "server/discover", {}, { headers: headers as Record<string, string> });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toEqual(challenge);
      expect(res.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("Unauthorized") } });
    }
    expect((await fetch(`${gw.url}/livez`)).status).toBe(200);
    expect((await fetch(gw.mcpUrl, { headers: { accept: "text/event-stream" } })).status).toBe(401);
  });

  it("the tasks extension: another principal's get, update and cancel read exactly like an unknown task", async () => {
    const created = await modernAs("alice", "tools/call", { name: "hang", arguments: {} });
    const taskId = created.body.result.taskId as string;
    expect(created.body.result).toMatchObject({ resultType: "task", status: "working" });
    const calls: Array<[string, (id: string) => Record<string, unknown>]> = [
      ["tasks/get", (id) => ({ taskId: id })],
      ["tasks/update", (id) => ({ taskId: id, inputResponses: { k: { action: "decline" } } })],
      ["tasks/cancel", (id) => ({ taskId: id })],
    ];
    for (const [method, params] of calls) {
      const foreign = await modernAs("bob", method, params(taskId));
      const unknown = await modernAs("bob", method, params(unknownId()));
      expect({ status: foreign.status, error: foreign.body.error }, method).toEqual({ status: unknown.status, error: unknown.body.error });
      expect(foreign.body.error, method).toEqual({ code: -32602, message: "Failed to retrieve task: Task not found" });
    }
    // Bob's cancel did nothing: the task is still alice's and still running.
    const still = await modernAs("alice", "tasks/get", { taskId });
    expect(still.body.result).toMatchObject({ taskId, status: "working" });
    await modernAs("alice", "tasks/cancel", { taskId });
  });

  it("the 2025-11-25 tasks: another principal's get, result, cancel and list read exactly like an unknown task", async () => {
    const alice = await openSessionAs(gw.mcpUrl, as("alice"));
    const bob = await openSessionAs(gw.mcpUrl, as("bob"));
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {}, task: { ttl: 60_000 } } };
    const created = await errorOf(await legacy(gw.mcpUrl, call, { ...as("alice"), "mcp-session-id": alice }));
    const taskId = created.result.task.taskId as string;
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const ask = (id: string) => legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 2, method, params: { taskId: id } }, { ...as("bob"), "mcp-session-id": bob });
      const foreign = await errorOf(await ask(taskId));
      const unknown = await errorOf(await ask(unknownId()));
      expect(foreign, method).toEqual(unknown);
      expect(foreign.error, method).toMatchObject({ code: -32602 });
    }
    const list = await errorOf(await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 3, method: "tasks/list", params: {} }, { ...as("bob"), "mcp-session-id": bob }));
    expect(list.result.tasks.map((t: { taskId: string }) => t.taskId)).not.toContain(taskId);
    const own = await errorOf(
      await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 4, method: "tasks/list", params: {} }, { ...as("alice"), "mcp-session-id": alice }),
    );
    expect(own.result.tasks.map((t: { taskId: string }) => t.taskId)).toContain(taskId);
    await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 5, method: "tasks/cancel", params: { taskId } }, { ...as("alice"), "mcp-session-id": alice });
  });

  it("treats another principal's session like an unknown one, for POST, GET and DELETE", async () => {
    const alice = await openSessionAs(gw.mcpUrl, as("alice"));
    const ping = (session: string) => legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 9, method: "ping" }, { ...as("bob"), "mcp-session-id": session });
    expect(await errorOf(await ping(alice))).toEqual(await errorOf(await ping(randomBytes(32).toString("base64url"))));
    expect((await ping(alice)).status).toBe(404);
    const get = await fetch(gw.mcpUrl, { headers: { ...as("bob"), accept: "text/event-stream", "mcp-session-id": alice } });
    expect(get.status).toBe(404);
    const del = await fetch(gw.mcpUrl, { method: "DELETE", headers: { ...as("bob"), "mcp-session-id": alice } });
    expect(del.status).toBe(404);
    const stillThere = await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 10, method: "ping" }, { ...as("alice"), "mcp-session-id": alice });
    expect(stillThere.status).toBe(200);
  });

  it("writes audit lines with a hashed principal, never the token or the tool's arguments", async () => {
    const created = await modernAs("alice", "tools/call", { name: "hang", arguments: {} });
    const taskId = created.body.result.taskId as string;
    const echoed = await modernAs("alice", "tools/call", { name: "echo", arguments: { text: "secret-argument-value" } });
    expect(echoed.body.result).toMatchObject({ resultType: "task" });
    await modernAs("bob", "tasks/get", { taskId });
    await modernAs("alice", "tasks/cancel", { taskId });
    const lines = () =>
      gw
        .output()
        .split("\n")
        .filter((l) => l.includes('"audit"'))
        .map((l) => JSON.parse(l));
    await waitFor(() => lines().some((l) => l.audit === "task.end" && l.taskId === taskId), { what: "the task's end in the audit log" });
    const mine = lines().filter((l) => l.taskId === taskId);
    expect(mine.map((l) => [l.audit, l.principal])).toEqual(
      expect.arrayContaining([
        ["task.create", auditHash("alice")],
        ["task.lookup_failed", auditHash("bob")],
        ["task.cancel", auditHash("alice")],
        ["task.end", auditHash("alice")],
      ]),
    );
    expect(lines().some((l) => l.audit === "auth.failed")).toBe(true);
    for (const secret of ["tok-alice", "tok-bob", "secret-argument-value", "user:alice"]) expect(gw.output()).not.toContain(secret);
  });
});
