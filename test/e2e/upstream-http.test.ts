import { afterEach, describe, expect, it } from "vitest";
import type { HttpUpstreamConfig } from "../../src/config/schema.js";
import type { JsonRpcId } from "../../src/jsonrpc/message.js";
import { UPSTREAM_PROTOCOL_VERSION, UpstreamError, type UpstreamEvent } from "../../src/upstream/connector.js";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait-for.js";
import { httpConfig, recordEvents, startFixtureHttp, testLogger, textOf, type FixtureHttpServer } from "../fixtures/upstreams.js";

describe("Streamable HTTP connector against the blocking fixture", () => {
  const connectors: HttpConnector[] = [];
  const servers: FixtureHttpServer[] = [];
  afterEach(async () => {
    await Promise.all(connectors.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  async function server(port?: number): Promise<FixtureHttpServer> {
    const s = await startFixtureHttp(port);
    servers.push(s);
    return s;
  }

  function connector(url: string, overrides: Partial<HttpUpstreamConfig> = {}): HttpConnector {
    const c = new HttpConnector("web", httpConfig(url, overrides), testLogger);
    connectors.push(c);
    return c;
  }

  async function started(overrides: Partial<HttpUpstreamConfig> = {}): Promise<{ c: HttpConnector; s: FixtureHttpServer; events: UpstreamEvent[] }> {
    const s = await server();
    const c = connector(s.url, overrides);
    const events = recordEvents(c);
    await c.start();
    return { c, s, events };
  }

  /** A tools/call that reports the upstream id it was given. */
  function call(c: HttpConnector, name: string, args: Record<string, unknown> = {}, extra: { progressToken?: string; signal?: AbortSignal } = {}) {
    let id: JsonRpcId | undefined;
    const meta = extra.progressToken ? { _meta: { progressToken: extra.progressToken } } : {};
    const response = c.request({
      method: "tools/call",
      params: { name, arguments: args, ...meta },
      onId: (assigned) => (id = assigned),
      ...(extra.signal && { signal: extra.signal }),
    });
    return { response, id: () => id };
  }

  const sessions = async (s: FixtureHttpServer): Promise<number> => ((await (await fetch(`${s.base}/admin/sessions`)).json()) as { sessions: number }).sessions;

  it("initializes, caches the result and calls a tool", async () => {
    const { c, s } = await started();
    expect(c.isReady()).toBe(true);
    expect(c.initializeResult()?.protocolVersion).toBe(UPSTREAM_PROTOCOL_VERSION);
    expect(c.initializeResult()?.serverInfo.name).toBe("blocking-fixture");
    expect(textOf(await call(c, "echo", { message: "over http" }).response)).toBe("Echo: over http");
    expect(await sessions(s)).toBe(1);
  });

  it("relates progress notifications to the request whose stream carried them", async () => {
    const { c, events } = await started();
    const a = call(c, "slow", { steps: 3, delayMs: 20 }, { progressToken: "a" });
    const b = call(c, "slow", { steps: 2, delayMs: 30 }, { progressToken: "b" });
    await Promise.all([a.response, b.response]);
    const progress = events.flatMap((e) => (e.kind === "notification" && e.message.method === "notifications/progress" ? [e] : []));
    const relatedOf = (token: string) => progress.filter((e) => e.message.params?.progressToken === token).map((e) => e.relatedTo);
    expect(relatedOf("a")).toEqual([a.id(), a.id(), a.id()]);
    expect(relatedOf("b")).toEqual([b.id(), b.id()]);
    expect(a.id()).not.toBe(b.id());
  });

  it("surfaces elicitation/create as a related request event; respond() completes the call", async () => {
    const s = await server();
    const c = connector(s.url);
    const asked: Array<{ relatedTo?: JsonRpcId }> = [];
    const answers: Array<Promise<void>> = [];
    recordEvents(c, (event) => {
      asked.push(event);
      answers.push(c.respond(event.message.id, { result: { action: "accept", content: { answer: "42" } } }));
    });
    await c.start();
    const ask = call(c, "ask", { question: "the answer?" });
    expect(textOf(await ask.response)).toBe("answer: 42");
    // The answer's own POST may still be in flight when the result arrives; settle it before teardown.
    await Promise.all(answers);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.relatedTo).toBe(ask.id());
  });

  it("re-initializes once when the upstream forgot the session (404) and the call succeeds", async () => {
    const { c, s, events } = await started();
    const before = c.initializeResult();
    await fetch(`${s.base}/admin/forget-sessions`, { method: "POST" });
    expect(textOf(await call(c, "echo", { message: "again" }).response)).toBe("Echo: again");
    expect(await sessions(s)).toBe(1);
    expect(c.initializeResult()).not.toBe(before);
    expect(events.filter((e) => e.kind === "state").map((e) => e.kind === "state" && e.ready)).toEqual([true, false, true]);
  });

  it("delivers messages of the GET stream without relatedTo", async () => {
    const { c, events } = await started();
    const listChanged = () => events.find((e) => e.kind === "notification" && e.message.method === "notifications/tools/list_changed");
    // The GET stream opens in the background after initialize: ask until one arrives.
    const seen = await waitFor(async () => (await call(c, "broadcast").response, listChanged()), { what: "list_changed on the GET stream" });
    expect(seen).not.toHaveProperty("relatedTo");
  });

  it("resumes a response stream the upstream closed early, keeping the attribution", async () => {
    const { c, events } = await started();
    const r = call(c, "resumable", { steps: 4, delayMs: 30 }, { progressToken: "r" });
    expect(textOf(await r.response)).toBe("resumed and done after 4 steps");
    const progress = events.filter((e) => e.kind === "notification" && e.message.params?.progressToken === "r");
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect(progress.every((e) => e.kind === "notification" && e.relatedTo === r.id())).toBe(true);
  });

  it("tells where a call's stream can be resumed, and another connector resumes it there with the upstream's own answer", async () => {
    const s = await server();
    const [a, b] = [connector(s.url), connector(s.url)];
    const [told, seen] = [recordEvents(a), recordEvents(b)];
    await Promise.all([a.start(), b.start()]);
    const first = call(a, "slow", { steps: 8, delayMs: 100 }, { progressToken: "p" });
    void first.response.catch(() => undefined);
    const stream = await waitFor(() => told.find((e): e is Extract<UpstreamEvent, { kind: "stream" }> => e.kind === "stream"), {
      what: "the stream's position",
    });
    expect(stream).toMatchObject({ relatedTo: first.id(), position: { requestId: first.id(), session: a.session(), lastEventId: expect.any(String) } });
    expect(told.filter((e) => e.kind === "stream")).toHaveLength(1);
    // The replica that made the call is gone; the upstream's handler goes on.
    await a.close({ keepSession: true });
    const { session, requestId, lastEventId } = stream.position;
    // b numbers its requests on its own: the resumed answer must come under b's id, not a's.
    expect(textOf(await call(b, "echo", { message: "first" }).response)).toBe("Echo: first");
    let id: JsonRpcId | undefined;
    const response = await b.request({ method: "tools/call", params: { name: "slow" }, session, resume: { requestId, lastEventId }, onId: (x) => (id = x) });
    expect(id).not.toBe(requestId);
    expect(response).toMatchObject({ id, result: { content: [{ text: "done after 8 steps" }] } });
    const replayed = seen.filter((e) => e.kind === "notification" && e.relatedTo === id && e.message.method === "notifications/progress");
    expect(replayed).toHaveLength(8);
    await fetch(`${s.base}/admin/forget-sessions`, { method: "POST" });
    await expect(b.request({ method: "tools/call", params: { name: "slow" }, session, resume: { requestId, lastEventId } })).rejects.toThrow(
      /no longer knows the session the call ran in \(HTTP 404\)/,
    );
  });

  it("gives up after requestTimeoutMs with 'timeout' and stays usable", async () => {
    // A connector without the deadline first: the fixture's first initialize, in a cold process on a
    // loaded machine, can take longer than the deadline tested here, which bounds initialize too.
    const { s } = await started();
    const c = connector(s.url, { requestTimeoutMs: 1_000 });
    await c.start();
    await expect(call(c, "hang").response).rejects.toMatchObject({ name: "UpstreamError", reason: "timeout" });
    expect(textOf(await call(c, "echo", { message: "after timeout" }).response)).toBe("Echo: after timeout");
  });

  it("stops waiting when the caller aborts", async () => {
    const { c } = await started();
    const controller = new AbortController();
    const hanging = call(c, "hang", {}, { signal: controller.signal });
    await waitFor(() => hanging.id() !== undefined, { what: "id assigned" });
    controller.abort();
    await expect(hanging.response).rejects.toMatchObject({ reason: "closed" });
    expect(textOf(await call(c, "echo", { message: "fine" }).response)).toBe("Echo: fine");
  });

  it("close() deletes the upstream session", async () => {
    const { c, s } = await started();
    expect(await sessions(s)).toBe(1);
    await c.close();
    await waitFor(async () => (await sessions(s)) === 0, { what: "session deleted" });
    await expect(call(c, "echo", { message: "x" }).response).rejects.toMatchObject({ reason: "closed" });
  });

  it("start() rejects clearly when the URL is unreachable, then connects once the upstream appears", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const c = connector(url);
    const err = await c.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ reason: "unreachable" });
    expect((err as Error).message).toBe(`cannot start upstream 'web': upstream 'web' is unreachable at ${url}: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(c.isReady()).toBe(false);
    await server(port);
    await waitFor(() => c.isReady(), { what: "connector ready once the upstream listens" });
    expect(textOf(await call(c, "echo", { message: "late" }).response)).toBe("Echo: late");
  });

  it("fails the calls in flight when the upstream dies, and reconnects when it is back", async () => {
    const s = await server();
    const port = Number(new URL(s.url).port);
    const c = connector(s.url);
    const events = recordEvents(c);
    await c.start();
    const running = call(c, "slow", { steps: 1000, delayMs: 20 }, { progressToken: "long" });
    const outcome = running.response.catch((err: unknown) => err);
    await waitFor(() => events.some((e) => e.kind === "notification" && e.relatedTo === running.id()), { what: "the call is running upstream" });
    await s.stop();
    expect(await outcome).toMatchObject({ name: "UpstreamError", reason: "unreachable" });
    await waitFor(() => !c.isReady(), { what: "not ready" });
    expect(c.lastError()).toMatch(/unreachable/);
    await server(port);
    await waitFor(() => c.isReady(), { what: "ready again" });
    expect(textOf(await call(c, "echo", { message: "back" }).response)).toBe("Echo: back");
  });
});
