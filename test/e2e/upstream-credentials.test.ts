import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Redis } from "ioredis";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth, legacy, openSessionAs } from "../helpers/auth.js";
import { messagesOf } from "../helpers/raw.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";
import { untilStatus } from "../helpers/until.js";
import { waitFor } from "../helpers/wait-for.js";

/** A loopback proxy in front of the demo server that remembers the Authorization of every request. */
function recordingProxy(target: string): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const to = new URL(target);
  const server = createServer((req, res) => {
    seen.push(String(req.headers.authorization ?? ""));
    const upstream = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` })),
  );
}

describe("upstream credentials", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let gw: GatewayProcess;
  beforeAll(async () => {
    demo = await startDemoHttp();
    proxy = await recordingProxy(demo.mcpUrl);
    gw = await startGateway(
      {
        auth: bearerAuth("alice"),
        upstreams: [{ name: "api", path: "/mcp", http: { url: proxy.url, headers: { authorization: "Bearer ${UPSTREAM_TOKEN}" } } }],
      },
      { UPSTREAM_TOKEN: "upstream-secret-4711" },
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await new Promise((r) => proxy?.server.close(r));
    proxy?.server.closeAllConnections();
    await demo?.stop();
  });

  it("sends the configured header, read from the environment, and never the client's Authorization; logs neither", async () => {
    const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers: as("alice") });
    expect(res.body.result).toMatchObject({ resultType: "complete" });
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(new Set(proxy.seen)).toEqual(new Set(["Bearer upstream-secret-4711"]));
    expect(gw.output()).not.toContain("upstream-secret-4711");
    expect(gw.output()).not.toContain("tok-alice");
  });
});

const STATIC = "Bearer upstream-secret-4711";
const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const JWT_SECRET = "jwt-secret-of-the-forwarding-test-32-characters";
const AUTH = { mode: "jwt", jwt: { secret: "${TEST_JWT_SECRET}", audience: "taskgate" } };
/**
 * Tokens by name, minted once the upstream's URL is known. Two per principal: the question of
 * alice's call is answered from her other device. All name taskgate and the upstream in `aud`
 * but carol's, which names taskgate alone.
 */
const tokens: Record<string, string> = {};
const bearer = (name: string) => `Bearer ${tokens[name]}`;
const asUser = (name: string) => ({ authorization: bearer(name) });
const mint = (sub: string, aud: string | string[]) =>
  new SignJWT({ sub, aud }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("10m").sign(new TextEncoder().encode(JWT_SECRET));

/** Polls tasks/get as `token` until the task is `status`; another terminal status fails at once. */
const until = (url: string, token: string, taskId: string, status: string) =>
  untilStatus(url, taskId, status, { headers: { authorization: `Bearer ${token}` } });

/** Every value the store holds under the prefix, as one text. */
async function storedText(redis: Redis, prefix: string): Promise<string> {
  const keys = await redis.keys(`${prefix}*`);
  const values = await Promise.all(
    keys.map(async (key) => {
      const type = await redis.type(key);
      if (type === "hash") return JSON.stringify(await redis.hgetall(key));
      if (type === "string") return (await redis.get(key)) ?? "";
      if (type === "zset") return JSON.stringify(await redis.zrange(key, 0, -1, "WITHSCORES"));
      if (type === "set") return JSON.stringify(await redis.smembers(key));
      if (type === "list") return JSON.stringify(await redis.lrange(key, 0, -1));
      return `${key}: ${type}`;
    }),
  );
  return keys.join("\n") + values.join("\n");
}

describe("upstream credentials with http.forwardAuthorization on", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let gw: GatewayProcess;
  let redis: Redis;
  const prefix = `t${randomBytes(4).toString("hex")}:`;
  beforeAll(async () => {
    demo = await startDemoHttp();
    proxy = await startRecordingProxy(demo.mcpUrl);
    redis = new Redis(inject("redisUrl"));
    const both = ["taskgate", proxy.mcpUrl];
    for (const [name, sub] of [
      ["alice", "alice"],
      ["alice-phone", "alice"],
      ["bob", "bob"],
      ["bob-renewed", "bob"],
    ] as const)
      tokens[name] = await mint(sub, both);
    tokens["carol"] = await mint("carol", "taskgate");
    const http = { url: proxy.mcpUrl, headers: { authorization: "Bearer ${UPSTREAM_TOKEN}" }, forwardAuthorization: true };
    gw = await startGateway(
      {
        auth: AUTH,
        store: { redisUrl: inject("redisUrl"), keyPrefix: prefix },
        // maxAttempts 2: the engine reads tool annotations itself (its own tools/list) and keeps re-run params.
        tasks: { detachAfterMs: 300, maxAttempts: 2 },
        upstreams: [
          { name: "api", path: "/mcp", http, tools: { deploy: { taskSupport: "required" } } },
          // Here deploy stays synchronous long enough for its question to park it (an MRTR round).
          { name: "parked", path: "/parked", http, tools: { deploy: { detachAfterMs: 10_000 } } },
        ],
      },
      { UPSTREAM_TOKEN: "upstream-secret-4711", TEST_JWT_SECRET: JWT_SECRET },
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await demo?.stop();
    redis?.disconnect();
  });

  /** The Authorization of each tools/call the upstream received since `before`. */
  const callTokensSince = (before: number) =>
    proxy.seen
      .slice(before)
      .filter((r) => r.method === "tools/call")
      .map((r) => r.authorization);

  it("sends a plain call with the caller's own token, on the 2026-07-28 wire and in a 2025-11-25 session", async () => {
    let before = proxy.seen.length;
    const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers: asUser("alice") });
    expect(res.body.result).toMatchObject({ resultType: "complete" });
    expect(callTokensSince(before)).toEqual([bearer("alice")]);

    const session = await openSessionAs(gw.mcpUrl, asUser("bob"));
    before = proxy.seen.length;
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } };
    const answered = await legacy(gw.mcpUrl, call, { ...asUser("bob"), "mcp-session-id": session });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain("hi");
    expect(callTokensSince(before)).toEqual([bearer("bob")]);
  });

  it("sends a call that detached with the caller's token", async () => {
    const before = proxy.seen.length;
    const created = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "sleep", arguments: { seconds: 0.8, progressIntervalMs: 100 } },
      { capabilities: WITH_TASKS, headers: asUser("alice") },
    );
    expect(created.body.result).toMatchObject({ resultType: "task", status: "working" });
    await until(gw.mcpUrl, tokens["alice"]!, created.body.result.taskId, "completed");
    expect(callTokensSince(before)).toEqual([bearer("alice")]);
  });

  it("sends a 2025-11-25 task call (the 2025-11-25 tasks) with the caller's token", async () => {
    const session = await openSessionAs(gw.mcpUrl, asUser("bob"));
    const headers = { ...asUser("bob"), "mcp-session-id": session };
    const before = proxy.seen.length;
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "sleep", arguments: { seconds: 0.2 }, task: { ttl: 60_000 } } };
    const [created] = await messagesOf(await legacy(gw.mcpUrl, call, headers));
    const taskId = created.result.task.taskId as string;
    await waitFor(
      async () => {
        const [got] = await messagesOf(await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 3, method: "tasks/get", params: { taskId } }, headers));
        return got.result?.status === "completed" ? got.result : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, what: `the 2025-11-25 tasks task ${taskId} to complete` },
    );
    expect(callTokensSince(before)).toEqual([bearer("bob")]);
  });

  it("answers a task's question with the token of the client whose call it is, not of the one who answered", async () => {
    const before = proxy.seen.length;
    const created = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "deploy", arguments: { service: "billing", seconds: 0.1 } },
      { capabilities: ELICIT, headers: asUser("alice") },
    );
    const taskId = created.body.result.taskId;
    const waiting = await until(gw.mcpUrl, tokens["alice"]!, taskId, "input_required");
    const [key] = Object.keys(waiting.inputRequests);
    const update = { taskId, inputResponses: { [key!]: { action: "accept", content: { confirm: true } } } };
    const phone = { authorization: bearer("alice-phone") };
    expect((await modern(gw.mcpUrl, "tasks/update", update, { capabilities: WITH_TASKS, headers: phone })).body.result).toMatchObject({
      resultType: "complete",
    });
    const done = await until(gw.mcpUrl, tokens["alice-phone"]!, taskId, "completed");
    expect(done.result.content[0].text).toContain("Deployed billing");
    const sent = proxy.seen.slice(before).filter((r) => r.httpMethod === "POST" && (r.method === "tools/call" || r.method === undefined));
    // The call itself, then the answer to its elicitation (a POST carrying a JSON-RPC response).
    expect(sent.map((r) => [r.method ?? "answer", r.authorization])).toEqual([
      ["tools/call", bearer("alice")],
      ["answer", bearer("alice")],
    ]);
  });

  it("answers the question of a call parked by an MRTR round with the caller's token", async () => {
    const url = `${gw.url}/parked`;
    const before = proxy.seen.length;
    const args = { name: "deploy", arguments: { service: "search", seconds: 0.1 } };
    const round = (await modern(url, "tools/call", args, { capabilities: ELICIT, headers: asUser("alice") })).body.result;
    expect(round).toMatchObject({ resultType: "input_required", requestState: expect.any(String) });
    const [key] = Object.keys(round.inputRequests);
    const retry = { ...args, inputResponses: { [key!]: { action: "accept", content: { confirm: true } } }, requestState: round.requestState };
    const done = await modern(url, "tools/call", retry, { capabilities: ELICIT, headers: { authorization: bearer("alice-phone") } });
    expect(done.body.result).toMatchObject({ resultType: "complete", content: [{ text: "Deployed search" }] });
    const sent = proxy.seen.slice(before).filter((r) => r.httpMethod === "POST" && (r.method === "tools/call" || r.method === undefined));
    expect(sent.map((r) => [r.method ?? "answer", r.authorization])).toEqual([
      ["tools/call", bearer("alice")],
      ["answer", bearer("alice")],
    ]);
  });

  it("answers a question on a 2025-11-25 session's own stream with the token of the call, even when the answer brings a newer one", async () => {
    let token = bearer("bob");
    // The real SDK client; its token is renewed between the call and its answer to the question.
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/parked`), {
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set("authorization", token);
        return fetch(url, { ...init, headers });
      },
    });
    const client = new Client({ name: "taskgate-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      token = bearer("bob-renewed");
      return { action: "accept", content: { confirm: true } };
    });
    await client.connect(transport);
    try {
      const before = proxy.seen.length;
      const result = await client.callTool({ name: "deploy", arguments: { service: "mail", seconds: 0.1 } });
      expect(result.content).toEqual([{ type: "text", text: "Deployed mail" }]);
      const sent = proxy.seen.slice(before).filter((r) => r.httpMethod === "POST" && (r.method === "tools/call" || r.method === undefined));
      expect(sent.map((r) => [r.method ?? "answer", r.authorization])).toEqual([
        ["tools/call", bearer("bob")],
        ["answer", bearer("bob")],
      ]);
    } finally {
      await client.close();
    }
  });

  it("keeps a token whose audience does not name the upstream: the call goes with the static header", async () => {
    const before = proxy.seen.length;
    const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers: asUser("carol") });
    expect(res.body.result).toMatchObject({ resultType: "complete" });
    expect(callTokensSince(before)).toEqual([STATIC]);
  });

  it("sends taskgate's own requests with the static header only", () => {
    const own = proxy.seen.filter(
      (r) => r.method === "initialize" || r.method === "notifications/initialized" || r.method === "tools/list" || r.httpMethod === "GET",
    );
    // initialize, initialized, the session's GET stream and the engine's own tools/list (tool annotations).
    expect(new Set(own.map((r) => r.method ?? r.httpMethod))).toEqual(new Set(["initialize", "notifications/initialized", "tools/list", "GET"]));
    expect(new Set(own.map((r) => r.authorization))).toEqual(new Set([STATIC]));
    // Answers went with the call's token: the newer ones that answered never reached the upstream.
    expect(new Set(proxy.seen.map((r) => r.authorization))).toEqual(new Set([STATIC, bearer("alice"), bearer("bob")]));
  });

  it("keeps the clients' tokens out of the logs and the store", async () => {
    for (const secret of [...Object.values(tokens), "upstream-secret-4711", JWT_SECRET]) expect(gw.output()).not.toContain(secret);
    const stored = await storedText(redis, prefix);
    // The tasks are there, with the params a re-run would use, but no credential.
    expect(stored).toContain("requestParams");
    expect(stored).toContain("billing");
    expect(stored).toContain("search");
    // A token's signature is its last part: no part of any token is stored.
    for (const token of Object.values(tokens)) expect(stored).not.toContain(token.split(".")[2]);
    expect(stored).not.toContain("upstream-secret");
  });
});

describe("http.forwardAuthorization where taskgate checks no token (auth.mode header)", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let gw: GatewayProcess;
  beforeAll(async () => {
    demo = await startDemoHttp();
    proxy = await startRecordingProxy(demo.mcpUrl);
    gw = await startGateway({
      auth: { mode: "header", header: { name: "x-user", trustedProxies: ["127.0.0.1", "::1"] } },
      upstreams: [{ name: "api", path: "/mcp", http: { url: proxy.mcpUrl, headers: { authorization: STATIC }, forwardAuthorization: true } }],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await demo?.stop();
  });

  /** The Authorization the upstream saw on the tools/call made with `authorization`. */
  async function sentWith(authorization: string): Promise<string[]> {
    const before = proxy.seen.length;
    const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers: { "x-user": "alice", authorization } });
    expect(res.body.result).toMatchObject({ resultType: "complete" });
    return proxy.seen
      .slice(before)
      .filter((r) => r.method === "tools/call")
      .map((r) => r.authorization ?? "");
  }

  it("forwards a token whose aud names the upstream (the upstream checks it), and no other", async () => {
    const forUpstream = `Bearer ${await mint("alice", [proxy.mcpUrl])}`;
    expect(await sentWith(forUpstream)).toEqual([forUpstream]);
    expect(await sentWith(`Bearer ${await mint("alice", "taskgate")}`)).toEqual([STATIC]);
    expect(await sentWith("Bearer opaque-token-of-the-proxy")).toEqual([STATIC]);
  });
});
