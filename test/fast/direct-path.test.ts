import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BearerAuthenticator } from "../../src/auth/bearer.js";
import { LegacyFront } from "../../src/dialects/legacy/legacy-front.js";
import { ModernFront } from "../../src/dialects/modern/modern-front.js";
import { HonoRequest } from "hono/request";
import { CallerLimits } from "../../src/http/caller-limits.js";
import { as, bearerAuth } from "../helpers/auth.js";
import { BASE, demoUpstream, inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { modernRequest, WITH_TASKS } from "../helpers/modern.js";
import { messagesOf, openSession, postRequest } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

const REQUIRED = { taskSupport: "required" };

/**
 * The direct path (src/http/direct-path.ts) answers the 2026-07-28 wire's tasks/get on the listener,
 * before the hono app. Each request here goes both ways: over the network to the listener, and
 * through `app.request`, which only the general path serves. Both must answer alike, and a spy
 * on ModernFront.answer (which only the direct path's polls call) shows which path served the first.
 */
describe("the direct path's polls (in process, over the listener)", () => {
  let gw: InProcessGateway;
  let taskId: string;
  const answered = vi.spyOn(ModernFront.prototype, "answer");
  beforeAll(async () => {
    gw = await inProcessGateway({
      auth: bearerAuth("alice", "bob"),
      limits: { taskRequestsPerSecond: 1, taskRequestBurst: 1000 },
      upstreams: [{ name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" }, tools: { echo: REQUIRED } }],
    });
    const created = await gw.modern("tools/call", { name: "echo", arguments: { text: "polled" } }, { capabilities: WITH_TASKS, headers: as("alice") });
    taskId = created.body.result.taskId;
    await waitFor(
      async () => (await gw.modern("tasks/get", { taskId }, { capabilities: WITH_TASKS, headers: as("alice") })).body.result.status === "completed",
      {
        what: "the task to complete",
      },
    );
  });
  afterAll(async () => gw?.close());
  afterEach(() => answered.mockClear());

  /** The same request over the listener and through app.request: status, content type and body of each. */
  const both = async (request: () => Request) => {
    const url = new URL(request().url);
    const direct = request();
    const viaListener = await fetch(`${gw.gateway.url}${url.pathname}`, {
      method: "POST",
      headers: direct.headers,
      body: await direct.text(),
    });
    const general = await gw.send(request());
    const read = async (res: Response) => ({
      status: res.status,
      type: res.headers.get("content-type"),
      challenge: res.headers.get("www-authenticate"),
      retryAfter: res.headers.get("retry-after"),
      body: JSON.parse(await res.text()) as any,
    });
    return { listener: await read(viaListener), general: await read(general), requestId: viaListener.headers.get("x-request-id") };
  };
  const poll =
    (params: Record<string, unknown>, headers: Record<string, string | undefined> = as("alice"), capabilities: Record<string, unknown> = WITH_TASKS) =>
    () =>
      modernRequest(`http://127.0.0.1/mcp`, "tasks/get", params, { capabilities, headers: { "x-request-id": "poll-1", ...headers }, id: 7 });

  it("answers a completed task's tasks/get as the general path does, with its result, and echoes X-Request-Id", async () => {
    const { listener, general, requestId } = await both(poll({ taskId }));
    expect(answered).toHaveBeenCalledTimes(1);
    expect(listener).toEqual(general);
    expect(listener.status).toBe(200);
    expect(listener.type).toBe("application/json");
    expect(listener.body).toMatchObject({ id: 7, result: { resultType: "complete", taskId, status: "completed", result: { resultType: "complete" } } });
    expect(JSON.stringify(listener.body.result.result)).toContain("polled");
    expect(requestId).toBe("poll-1");
  });

  it("answers an unknown task, another principal's task, a missing extension and a wrong Mcp-Name with the general path's errors", async () => {
    const cases = [
      poll({ taskId: "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx" }),
      poll({ taskId }, as("bob")),
      poll({ taskId }, as("alice"), {}),
      poll({ taskId }, { ...as("alice"), "mcp-name": "another" }),
    ];
    for (const request of cases) {
      const { listener, general } = await both(request);
      expect(listener).toEqual(general);
      expect(listener.body.error.code).toBeLessThan(0);
    }
    expect(answered).toHaveBeenCalledTimes(cases.length);
  });

  it("refuses a missing or unknown token with the general path's 401 and challenge", async () => {
    for (const headers of [{ authorization: undefined }, { authorization: "Bearer tok-mallory" }]) {
      const { listener, general } = await both(poll({ taskId }, headers));
      expect(listener.status).toBe(401);
      expect(listener).toEqual(general);
      expect(listener.challenge).toMatch(/^Bearer realm="taskgate"/);
    }
    expect(answered).not.toHaveBeenCalled();
  });

  it("reads a repeated Authorization joined, as the general path does: two tokens are a malformed one (401)", async () => {
    const request = poll({ taskId })();
    const body = await request.text();
    const headers: string[] = [];
    request.headers.forEach((value, name) => headers.push(name, value));
    headers.push("authorization", "Bearer tok-bob", "content-length", String(Buffer.byteLength(body)), "host", new URL(gw.gateway.url).host);
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(`${gw.gateway.url}/mcp`, { method: "POST", headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      sent.once("error", reject);
      sent.end(body);
    });
    const joined = await gw.send(poll({ taskId }, { authorization: "Bearer tok-alice, Bearer tok-bob" })());
    expect(joined.status).toBe(401);
    expect(status).toBe(joined.status);
    expect(answered).not.toHaveBeenCalled();
  });

  /** A request written by hand over the listener (fetch sets Host itself): its status and body once answered. */
  const raw = (method: string, path: string, headers: Record<string, string>, body?: string, end = true) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const sent = httpRequest(`${gw.gateway.url}${path}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.once("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      });
      sent.once("error", reject);
      if (body !== undefined) sent.write(body);
      if (end) sent.end();
    });
  const headersOf = (request: Request, extra: Record<string, string>) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    return { ...headers, ...extra };
  };

  it("refuses a Host no URL can be built from (a port above 65535) with 400 and a JSON-RPC body, a poll as any other request", async () => {
    const host = "127.0.0.1:99999";
    const pollBody = await poll({ taskId })().text();
    const polled = await raw("POST", "/mcp", headersOf(poll({ taskId })(), { host, "content-length": String(Buffer.byteLength(pollBody)) }), pollBody);
    const listed = modernRequest("http://127.0.0.1/mcp", "tools/list", {}, { headers: as("alice") });
    const listBody = await listed.text();
    const other = await raw("POST", "/mcp", headersOf(listed, { host, "content-length": String(Buffer.byteLength(listBody)) }), listBody);
    const probe = await raw("GET", "/livez", { host });
    for (const answer of [polled, other, probe]) {
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Bad Request: invalid Host header" } });
    }
    expect(answered).not.toHaveBeenCalled();
    // The same poll with a Host that names a port is served.
    const served = await raw(
      "POST",
      "/mcp",
      headersOf(poll({ taskId })(), { host: "127.0.0.1:65535", "content-length": String(Buffer.byteLength(pollBody)) }),
      pollBody,
    );
    expect(JSON.parse(served.body).result).toMatchObject({ taskId, status: "completed" });
  });

  it("answers an unauthenticated poll at once with 401, before its body has come", async () => {
    const request = poll({ taskId }, { authorization: "Bearer tok-mallory" })();
    const body = await request.text();
    // Ten bytes of a longer body, and the request left open: the answer cannot wait for the rest.
    const answer = raw("POST", "/mcp", headersOf(request, { "content-length": String(Buffer.byteLength(body)) }), body.slice(0, 10), false);
    let timer: NodeJS.Timeout | undefined;
    const refused = await Promise.race([answer, new Promise<undefined>((resolve) => (timer = setTimeout(resolve, 10_000, undefined)))]);
    clearTimeout(timer);
    expect(refused?.status, "answered before the body came").toBe(401);
    expect(JSON.parse(refused!.body).error).toMatchObject({ code: -32600, message: expect.stringMatching(/^Unauthorized/) });
    expect(answered).not.toHaveBeenCalled();
  });

  it("authenticates once a legacy poll it hands to the general path (an unknown session), which answers it as its own", async () => {
    const request = () =>
      postRequest(
        "http://127.0.0.1/mcp",
        { jsonrpc: "2.0", id: 9, method: "tasks/get", params: { taskId } },
        { "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-11-25", ...as("alice") },
      );
    const authenticated = vi.spyOn(BearerAuthenticator.prototype, "authenticate");
    try {
      const direct = request();
      const res = await fetch(`${gw.gateway.url}/mcp`, { method: "POST", headers: direct.headers, body: await direct.text() });
      expect(authenticated).toHaveBeenCalledTimes(1);
      const general = await gw.send(request());
      expect({ status: res.status, body: await res.text() }).toEqual({ status: general.status, body: await general.text() });
      expect(res.status).toBe(404);
    } finally {
      authenticated.mockRestore();
    }
  });

  it("leaves to the general path a body it cannot serve: malformed JSON, another method than the header's, an Origin", async () => {
    const malformed = () => new Request("http://127.0.0.1/mcp", { method: "POST", headers: poll({ taskId })().headers, body: '{"jsonrpc":"2.0",' });
    const otherMethod = () =>
      modernRequest(
        "http://127.0.0.1/mcp",
        "tasks/cancel",
        { taskId },
        { capabilities: WITH_TASKS, headers: { ...as("alice"), "mcp-method": "tasks/get" }, id: 8 },
      );
    for (const request of [malformed, otherMethod]) {
      const { listener, general } = await both(request);
      expect(listener).toEqual(general);
      expect(listener.body.error.code).toBeLessThan(0);
    }
    const fromPage = await fetch(`${gw.gateway.url}/mcp`, {
      method: "POST",
      headers: poll({ taskId }, { ...as("alice"), origin: "http://localhost:5173" })().headers,
      body: await poll({ taskId })().text(),
    });
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(((await fromPage.json()) as any).result.status).toBe("completed");
    expect(answered).not.toHaveBeenCalled();
  });
});

describe("the direct path's polls on the legacy wire (in process, over the listener)", () => {
  let gw: InProcessGateway;
  let session: string;
  let taskId: string;
  const answered = vi.spyOn(LegacyFront.prototype, "answer");
  const legacy =
    (method: string, params: Record<string, unknown>, id: number, headers: Record<string, string> = {}) =>
    () =>
      postRequest(
        "http://127.0.0.1/mcp",
        { jsonrpc: "2.0", id, method, params },
        { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25", ...headers },
      );
  const overListener = async (request: Request) => fetch(`${gw.gateway.url}/mcp`, { method: "POST", headers: request.headers, body: await request.text() });
  const read = async (res: Response) => ({ status: res.status, type: res.headers.get("content-type"), body: await res.text() });
  beforeAll(async () => {
    gw = await inProcessGateway({ upstreams: [{ name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" }, tools: { echo: REQUIRED } }] });
    session = await gw.openSession({ tasks: { requests: { tools: { call: {} } } } });
    const created = (await messagesOf(await gw.send(legacy("tools/call", { name: "echo", arguments: { text: "polled" }, task: {} }, 1)()))).find(
      (m) => "result" in m,
    );
    taskId = created.result.task.taskId;
    await waitFor(async () => JSON.parse((await read(await gw.send(legacy("tasks/get", { taskId }, 2)()))).body).result.status === "completed", {
      what: "the task to complete",
    });
  });
  afterAll(async () => gw?.close());
  afterEach(() => answered.mockClear());

  it("answers a 2025-11-25 session's tasks/get, and an unknown task, as the general path does", async () => {
    for (const [params, id] of [
      [{ taskId }, 3],
      [{ taskId: "01JUNKNOWN" }, 4],
    ] as const) {
      const listener = await read(await overListener(legacy("tasks/get", params, id)()));
      expect(listener).toEqual(await read(await gw.send(legacy("tasks/get", params, id)())));
      expect(listener.type).toBe("application/json");
    }
    expect(answered).toHaveBeenCalledTimes(2);
    expect(JSON.parse((await read(await overListener(legacy("tasks/get", { taskId }, 5)()))).body).result).toMatchObject({ taskId, status: "completed" });
  });

  it("leaves to the general path an unknown session and every other request of a session", async () => {
    const unknown = legacy("tasks/get", { taskId }, 6, { "mcp-session-id": "no-such-session" });
    const listener = await read(await overListener(unknown()));
    expect(listener).toEqual(await read(await gw.send(unknown())));
    expect(listener.status).toBe(404);
    const listed = await read(await overListener(legacy("tools/list", {}, 7)()));
    expect(JSON.stringify(JSON.parse(listed.body.split("data: ").pop() ?? listed.body))).toContain("echo");
    expect(answered).not.toHaveBeenCalled();
  });
});

describe("the direct path and the rate limit (in process)", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await inProcessGateway({ limits: { taskRequestsPerSecond: 0.01, taskRequestBurst: 2 } });
  });
  afterAll(async () => gw?.close());

  it("spends the caller's one bucket on either path, and answers the poll over it with 429, -32000 and Retry-After", async () => {
    const poll = () => modernRequest("http://127.0.0.1/mcp", "tasks/get", { taskId: "01JUNKNOWNTASKIDxxxxxxxxxxxxxxxxx" }, { capabilities: WITH_TASKS });
    const overListener = async () => {
      const request = poll();
      return fetch(`${gw.gateway.url}/mcp`, { method: "POST", headers: request.headers, body: await request.text() });
    };
    expect((await overListener()).status).toBe(200);
    expect((await gw.send(poll())).status).toBe(200);
    const refused = await overListener();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await refused.json()) as any).error).toMatchObject({ code: -32000 });
    const general = await gw.send(poll());
    expect(general.status).toBe(429);
  });
});

/**
 * Every other request the direct path takes runs routes.ts's steps (messageSteps) and is written
 * on Node's response. Each request here goes over the listener and through `app.request` (the
 * general path alone): status, content type, Mcp-Session-Id and the messages must be alike. A spy
 * on HonoRequest.header, which only the general path reads a request through, shows which path
 * served the first.
 */
describe("the direct path's relayed requests (in process, over the listener)", () => {
  let gw: InProcessGateway;
  let session: string;
  const viaHono = vi.spyOn(HonoRequest.prototype, "header");
  beforeAll(async () => {
    gw = await inProcessGateway({
      auth: bearerAuth("alice", "bob"),
      limits: { taskRequestsPerSecond: 0.01, taskRequestBurst: 40 },
      upstreams: [demoUpstream()],
    });
    session = await openSession(`${BASE}/mcp`, {}, "2025-11-25", (request) => {
      for (const [name, value] of Object.entries(as("alice"))) request.headers.set(name, value!);
      return gw.send(request);
    });
  });
  afterAll(async () => gw?.close());
  afterEach(() => viaHono.mockClear());

  const legacy =
    (body: Record<string, unknown>, headers: Record<string, string | undefined> = as("alice")) =>
    () =>
      postRequest(
        `${BASE}/mcp`,
        { jsonrpc: "2.0", ...body },
        { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25", ...(headers as Record<string, string>) },
      );
  const read = async (res: Response) => ({
    status: res.status,
    type: res.headers.get("content-type"),
    session: res.headers.get("mcp-session-id"),
    retryAfter: res.headers.get("retry-after"),
    messages: await messagesOf(res),
  });
  /** Over the listener first, with the spy read in between, then through app.request. */
  const both = async (request: () => Request) => {
    const sent = request();
    const readBefore = viaHono.mock.calls.length;
    const overListener = await fetch(`${gw.gateway.url}/mcp`, { method: "POST", headers: sent.headers, body: await sent.text() });
    const listener = await read(overListener);
    const honoReads = viaHono.mock.calls.length - readBefore;
    const general = await read(await gw.send(request()));
    return { listener, general, honoReads, requestId: overListener.headers.get("x-request-id") };
  };

  it("relays a 2025-11-25 session's requests as the general path does, without hono", async () => {
    const cases = [
      legacy({ id: 1, method: "tools/list" }),
      legacy({ id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "direct" } } }),
      legacy({ id: 3, method: "tools/call", params: { name: "fail", arguments: { message: "on purpose" } } }),
      legacy({ id: 4, method: "tools/call", params: { name: "no-such-tool", arguments: {} } }),
      legacy({ id: 5, method: "no/such-method" }),
      legacy({ id: 6, method: "ping" }),
    ];
    for (const request of cases) {
      const { listener, general, honoReads } = await both(request);
      expect(listener).toEqual(general);
      expect(honoReads, JSON.stringify(listener.messages)).toBe(0);
      expect(listener.messages).toHaveLength(1);
    }
    const { listener, requestId } = await both(
      legacy({ id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "direct" } } }, { ...as("alice"), "x-request-id": "direct-7" }),
    );
    expect(JSON.stringify(listener.messages[0].result)).toContain("direct");
    expect(requestId).toBe("direct-7");
  });

  it("refuses another principal's session and an unknown one as the general path does", async () => {
    for (const request of [
      legacy({ id: 8, method: "tools/list" }, as("bob")),
      legacy({ id: 9, method: "tools/list" }, { ...as("alice"), "mcp-session-id": "no-such-session" }),
    ]) {
      const { listener, general } = await both(request);
      expect(listener).toEqual(general);
      expect(listener.status).toBe(404);
    }
  });

  it("relays the 2026-07-28 wire's requests as the general path does, without hono", async () => {
    for (const [method, params] of [
      ["tools/list", {}],
      ["tools/call", { name: "echo", arguments: { text: "modern" } }],
      ["tools/call", { name: "no-such-tool", arguments: {} }],
    ] as const) {
      const request = () => modernRequest(`${BASE}/mcp`, method, params, { headers: as("alice"), id: 10 });
      const { listener, general, honoReads } = await both(request);
      expect(listener).toEqual(general);
      expect(honoReads).toBe(0);
    }
  });

  it("hands a reply that turns into a stream (progress) to the general path, which writes it", async () => {
    const sleep = legacy({
      id: 11,
      method: "tools/call",
      params: { name: "sleep", arguments: { seconds: 0.2, progressIntervalMs: 100 }, _meta: { progressToken: "p" } },
    });
    const { listener, general, requestId } = await both(sleep);
    expect(listener.type).toBe("text/event-stream");
    expect(general.type).toBe("text/event-stream");
    const methods = (messages: any[]) => messages.map((m) => m.method ?? "answer");
    expect(methods(listener.messages)).toEqual(methods(general.messages));
    expect(methods(listener.messages)).toContain("notifications/progress");
    expect(listener.messages.at(-1)).toEqual(general.messages.at(-1));
    expect(requestId).toMatch(/^[\w.:-]+$/);
  });

  it("answers a step that throws with the general path's internal error, under the request's id, and goes on serving", async () => {
    const rate = vi.spyOn(CallerLimits.prototype, "rate").mockImplementation(() => {
      throw new Error("a step broke");
    });
    try {
      const { listener, general, honoReads } = await both(legacy({ id: 12, method: "tools/list" }));
      expect(listener).toEqual(general);
      expect(honoReads).toBe(0);
      expect(listener.messages[0]).toMatchObject({ id: 12, error: { code: -32603 } });
    } finally {
      rate.mockRestore();
    }
    const after = await both(legacy({ id: 13, method: "ping" }));
    expect(after.listener.status).toBe(200);
  });

  it("leaves a notification, and a caller over the rate limit, answered alike", async () => {
    const note = legacy({ method: "notifications/roots/list_changed" });
    const noted = await both(note);
    expect(noted.listener).toEqual(noted.general);
    expect(noted.listener.status).toBe(202);
    let refused: Awaited<ReturnType<typeof both>> | undefined;
    for (let i = 0; i < 60 && !refused; i++) {
      const answer = await both(legacy({ id: 100 + i, method: "tasks/list" }, as("bob")));
      if (answer.listener.status === 429) refused = answer;
    }
    expect(refused, "bob's bucket for tasks/* runs out within 60 requests").toBeDefined();
    expect(refused!.listener).toEqual(refused!.general);
    expect(refused!.listener.retryAfter).toMatch(/^\d+$/);
  });
});
