import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { messagesOf, openSession, post } from "../helpers/raw.js";
import { startRedis, type RedisProcess } from "../helpers/redis.js";
import { ended, startTask } from "../helpers/replicas.js";
import { waitFor } from "../helpers/wait-for.js";

/** A request that hangs fails here; "within a second" is the store's own deadline (callTimeoutMs). */
const NO_HANG = { signal: () => AbortSignal.timeout(5_000) };

describe("Redis going away under a running taskgate (AOF, fsync always)", () => {
  const { defer } = useCleanups();

  it("answers task requests with -32603 'task store unavailable' while Redis is down, keeps passthrough working, and loses nothing acknowledged", async () => {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-outage-"));
    defer(() => rm(dir, { recursive: true, force: true }));
    let redis: RedisProcess = await startRedis({ appendonly: true, dir });
    defer(() => redis.stop());
    const gateway: GatewayProcess = await startGateway({
      store: { redisUrl: redis.url, keyPrefix: "outage:" },
      // A lease longer than the outage: the owner keeps its call through it.
      tasks: { detachAfterMs: 200, leaseMs: 8_000, reaperIntervalMs: 500 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { sleep: { taskSupport: "required" }, hang: { taskSupport: "required" } } }],
    });
    defer(() => gateway.stop("SIGKILL"));
    const url = gateway.mcpUrl;

    const done = await startTask(url, "sleep", { seconds: 0 });
    const before = await ended([url], done);
    const running = await startTask(url, "sleep", { seconds: 1 });
    const session = await openSession(url, {}, "2025-06-18");
    await redis.stop("SIGKILL");

    const started = Date.now();
    const read = await fetchWithin(() => getTask(url, done));
    console.log(`tasks/get with Redis down answered in ${Date.now() - started} ms`);
    expect(read).toMatchObject({ status: 503, body: { error: { code: -32603, message: "task store unavailable" } } });
    const create = await fetchWithin(() => modern(url, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS }));
    expect(create).toMatchObject({ status: 503, body: { error: { code: -32603, message: "task store unavailable" } } });
    // Not about tasks, on the stateless wire: straight through to the upstream, no store needed.
    const echo = await fetchWithin(() => modern(url, "tools/call", { name: "echo", arguments: { text: "still here" } }));
    expect(echo.body.result).toMatchObject({ content: [{ type: "text", text: "still here" }] });
    // A legacy session this replica already served goes on too (its record is remembered).
    const legacyCall = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "in a session" } } };
    const [legacy] = await fetchWithin(async () =>
      messagesOf(await post(url, legacyCall, { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" })),
    );
    expect(legacy.result).toMatchObject({ content: [{ type: "text", text: "in a session" }] });
    // A new session cannot be opened: it must be stored for every replica to find it.
    const opened = await fetchWithin(() =>
      post(url, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    );
    expect(opened.status).toBe(503);
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(503);
    expect(gateway.proc.exitCode).toBeNull();

    redis = await startRedis({ appendonly: true, dir, port: redis.port });
    await waitFor(async () => (await fetch(`${gateway.url}/readyz`)).ok, { timeoutMs: 10_000, what: "taskgate ready again" });
    // What was acknowledged before the crash is all there: the finished task exactly as it was,
    // and the running one ends with the upstream's result (written once the store was back).
    expect((await getTask(url, done)).body.result).toEqual({ ...before, resultType: "complete" });
    expect(await ended([url], running)).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 1 s" }] } });
    const after = await startTask(url, "sleep", { seconds: 0 });
    expect((await ended([url], after)).status).toBe("completed");
  });
});

async function fetchWithin<T>(request: () => Promise<T>): Promise<T> {
  const deadline = NO_HANG.signal();
  return Promise.race([request(), new Promise<never>((_, reject) => deadline.addEventListener("abort", () => reject(new Error("the request hung"))))]);
}
