import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError, type Store } from "../../src/store/contract.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { demoUpstream, inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { WITH_TASKS } from "../helpers/modern.js";
import { messagesOf } from "../helpers/raw.js";

/** The memory store, whose task reads fail as an unreachable Redis does once `failReads` is set. */
function flakyStore(): { store: Store; failReads(after?: number): void; heal(): void } {
  const memory = new MemoryStore();
  let failAfter = Infinity;
  const store = new Proxy(memory, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if ((key !== "getTask" && key !== "viewTask") || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => (failAfter-- <= 0 ? Promise.reject(new StoreUnavailableError()) : value.apply(target, args));
    },
  });
  return { store, failReads: (after = 0) => void (failAfter = after), heal: () => void (failAfter = Infinity) };
}

describe("the task store going away is 503 with -32603 on every path (in process)", () => {
  let gw: InProcessGateway;
  const flaky = flakyStore();
  beforeAll(async () => {
    gw = await inProcessGateway(
      {
        tasks: { cancelGraceMs: 50 },
        upstreams: [demoUpstream({ tools: { hang: { taskSupport: "required" } } })],
        admin: { port: 0, token: ADMIN_TOKEN },
      },
      { store: flaky.store },
    );
  });
  afterAll(async () => gw?.close());

  it("answers tasks/get of the tasks extension with 503 while the store is away, and serves again once it is back", async () => {
    const task = (await gw.modern("tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    flaky.failReads();
    const away = await gw.modern("tasks/get", { taskId: task.taskId }, { capabilities: WITH_TASKS });
    expect([away.status, away.body.error]).toEqual([503, { code: -32603, message: "task store unavailable" }]);
    flaky.heal();
    expect((await gw.modern("tasks/get", { taskId: task.taskId }, { capabilities: WITH_TASKS })).body.result.status).toBe("working");
  });

  it("answers tasks/result of the 2025-11-25 tasks with 503 when the store goes away while it waits", async () => {
    const session = await gw.openSession();
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25", accept: "application/json" };
    const created = await messagesOf(
      await gw.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {}, task: {} } }, headers),
    );
    const { taskId } = created[0].result.task;
    // The first read (does the task exist?) succeeds; the follow's reads fail.
    flaky.failReads(1);
    const res = await gw.post({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } }, headers);
    flaky.heal();
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32603, message: "task store unavailable" } });
  });

  it("answers the admin API's task read with 503 while the store is away: the same mapping", async () => {
    const task = (await gw.modern("tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
    flaky.failReads();
    const away = await admin(gw.gateway.adminUrl!, `/api/tasks/${task.taskId}`);
    flaky.heal();
    expect([away.status, away.body]).toEqual([503, { error: "task store unavailable" }]);
    expect((await admin(gw.gateway.adminUrl!, `/api/tasks/${task.taskId}`)).body.status).toBe("working");
  });
});
