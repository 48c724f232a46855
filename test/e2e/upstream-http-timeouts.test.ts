import { spawn, spawnSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpUpstreamConfig } from "../../src/config/schema.js";
import type { UpstreamEvent } from "../../src/upstream/connector.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { connectClient, textOf as resultText } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { ROOT, startGateway } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";
import { httpConfig, recordEvents, startFixtureHttp, testLogger, textOf, type FixtureHttpServer } from "../fixtures/upstreams.js";

/**
 * What bounds one call to an HTTP upstream (README: Upstream timeouts): requestTimeoutMs when set,
 * else nothing of taskgate's own. Where a test shows that the HTTP client's limits do not govern,
 * its gateway process has them shortened to SHORT_LIMIT_MS (test/fixtures/short-http-limits.mjs)
 * for every request that does not set its own, as undici's defaults (300 s for the headers, 300 s
 * between body chunks) would: calls that outlast them show it in seconds rather than minutes.
 */
const SHORT_LIMIT_MS = 400;
const LONGER_THAN_LIMIT_MS = 1_200;
const PRELOAD = pathToFileURL(join(ROOT, "test/fixtures/short-http-limits.mjs")).href;
const SHORT_LIMITS_ENV = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${PRELOAD}`.trim(), SHORT_HTTP_LIMITS_MS: String(SHORT_LIMIT_MS) };

/** A task once it is no longer working (2026-07-28 tasks/get). */
const endOf = (mcpUrl: string, taskId: string) =>
  waitFor(
    async () => {
      const task = (await getTask(mcpUrl, taskId)).body.result;
      return task?.status === "working" ? undefined : task;
    },
    { timeoutMs: 10_000, what: `task ${taskId} to end` },
  );

describe("timeouts of calls to an HTTP upstream", () => {
  const connectors: HttpConnector[] = [];
  const servers: FixtureHttpServer[] = [];
  afterEach(async () => {
    await Promise.all(connectors.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  async function started(flags: string[], overrides: Partial<HttpUpstreamConfig> = {}): Promise<{ c: HttpConnector; events: UpstreamEvent[] }> {
    const s = await startFixtureHttp(0, flags);
    servers.push(s);
    const c = new HttpConnector("web", httpConfig(s.url, overrides), testLogger);
    connectors.push(c);
    const events = recordEvents(c);
    await c.start();
    return { c, events };
  }

  const call = (c: HttpConnector, name: string, args: Record<string, unknown> = {}) => c.request({ method: "tools/call", params: { name, arguments: args } });
  const wentDown = (events: UpstreamEvent[]) => events.some((e) => e.kind === "state" && !e.ready);

  it("requestTimeoutMs fails that one call, naming the setting; other calls complete and the upstream stays ready", async () => {
    const { c, events } = await started(["--json"], { requestTimeoutMs: 800 });
    const hanging = call(c, "hang").catch((err: unknown) => err);
    const others = [1, 2, 3].map((i) => call(c, "slow", { steps: 1, delayMs: 100 * i }));
    expect((await Promise.all(others)).map(textOf)).toEqual(["done after 1 steps", "done after 1 steps", "done after 1 steps"]);
    expect(await hanging).toMatchObject({
      name: "UpstreamError",
      reason: "timeout",
      message: expect.stringMatching(/^upstream 'web' did not answer tools\/call \(id \d+\) within 800 ms \(upstreams\[\]\.http\.requestTimeoutMs\)$/),
    });
    expect(c.isReady()).toBe(true);
    expect(textOf(await call(c, "echo", { message: "after the timeout" }))).toBe("Echo: after the timeout");
    expect(wentDown(events)).toBe(false);
  });

  it("a connection closed mid-call fails that call alone: the upstream is not called unreachable", async () => {
    const { c, events } = await started(["--json"]);
    const slow = call(c, "slow", { steps: 1, delayMs: 500 });
    const dropped = await call(c, "drop").catch((err: unknown) => err);
    expect(dropped).toMatchObject({ name: "UpstreamError", reason: "closed" });
    expect((dropped as Error).message).toMatch(/^upstream 'web' did not answer tools\/call: the connection broke before the answer \(other side closed/);
    expect(textOf(await slow)).toBe("done after 1 steps");
    expect(c.isReady()).toBe(true);
    expect(c.lastError()).toBeUndefined();
    expect(wentDown(events)).toBe(false);
  });

  // Node accepts every connection it can; a socket that listens and never accepts, with a backlog of
  // one already taken, leaves the next connection unmade (its SYN is dropped), as a blackholed host does.
  const hasPython = spawnSync("python3", ["--version"]).status === 0;
  it.skipIf(!hasPython)("connectTimeoutMs bounds making the connection; a connection not made is 'unreachable'", async () => {
    const script = "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()";
    const listener = spawn("python3", ["-c", script], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    listener.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const filler: Socket[] = [];
    try {
      const port = Number((await waitFor(() => /^(\d+)\n/.exec(out), { what: "the listening socket's port" }))[1]);
      const first = connect(port, "127.0.0.1").on("error", () => undefined);
      filler.push(first);
      await new Promise((resolve) => first.once("connect", resolve));
      const url = `http://127.0.0.1:${port}/mcp`;
      const c = new HttpConnector("web", httpConfig(url, { connectTimeoutMs: 300 }), testLogger);
      connectors.push(c);
      const err = await c.start().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect(err).toMatchObject({ reason: "unreachable" });
      expect((err as Error).message).toBe(
        `cannot start upstream 'web': upstream 'web' is unreachable at ${url}: no connection within 300 ms (upstreams[].http.connectTimeoutMs)`,
      );
    } finally {
      for (const socket of filler) socket.destroy();
      listener.kill("SIGKILL");
    }
  });

  it("through taskgate: the task of a call past requestTimeoutMs fails saying so, while other calls complete and /readyz stays ready", async () => {
    const s = await startFixtureHttp(0, ["--json"]);
    servers.push(s);
    const gw = await startGateway({ tasks: { detachAfterMs: 200 }, upstreams: [{ name: "web", path: "/mcp", http: { url: s.url, requestTimeoutMs: 1_500 } }] });
    try {
      const created = (await modern(gw.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS })).body.result;
      expect(created).toMatchObject({ resultType: "task", status: "working" });
      const { client } = await connectClient(gw.mcpUrl);
      const others = await Promise.all([1, 2, 3].map((i) => client.callTool({ name: "slow", arguments: { steps: 1, delayMs: 150 * i } })));
      expect(others.map(resultText)).toEqual(["done after 1 steps", "done after 1 steps", "done after 1 steps"]);
      const ended = await endOf(gw.mcpUrl, created.taskId);
      expect(ended).toMatchObject({
        status: "failed",
        error: { message: expect.stringMatching(/did not answer tools\/call \(id \d+\) within 1500 ms \(upstreams\[\]\.http\.requestTimeoutMs\)/) },
      });
      expect(resultText(await client.callTool({ name: "echo", arguments: { message: "still there" } }))).toBe("Echo: still there");
      await client.close();
      const ready = await fetch(`${gw.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(gw.output()).not.toMatch(/unreachable/);
    } finally {
      await gw.stop();
    }
  });

  it("through taskgate: a JSON answer and a silent SSE stream that outlast the HTTP client's own limits complete", async () => {
    const json = await startFixtureHttp(0, ["--json"]);
    // No event store: a stream cut by a client limit could not be resumed.
    const sse = await startFixtureHttp(0, ["--no-events"]);
    servers.push(json, sse);
    const upstreams = [
      { name: "json", path: "/mcp", http: { url: json.url } },
      { name: "sse", path: "/sse", http: { url: sse.url } },
    ];
    const gw = await startGateway({ tasks: { detachAfterMs: 200 }, upstreams }, SHORT_LIMITS_ENV);
    try {
      // The JSON upstream's call as a task, as a long call would run; the SSE one as a plain call.
      const slow = { name: "slow", arguments: { steps: 1, delayMs: LONGER_THAN_LIMIT_MS } };
      const created = (await modern(gw.mcpUrl, "tools/call", slow, { capabilities: WITH_TASKS })).body.result;
      expect(created).toMatchObject({ resultType: "task", status: "working" });
      const { client } = await connectClient(`${gw.url}/sse`);
      expect(resultText(await client.callTool(slow))).toBe("done after 1 steps");
      await client.close();
      const ended = await endOf(gw.mcpUrl, created.taskId);
      expect(ended).toMatchObject({ status: "completed" });
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });
});
