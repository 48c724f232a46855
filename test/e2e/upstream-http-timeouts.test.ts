import { spawn, spawnSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { Agent, type Dispatcher } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpUpstreamConfig } from "../../src/config/schema.js";
import type { UpstreamEvent } from "../../src/upstream/connector.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { waitFor } from "../helpers/wait-for.js";
import { httpConfig, recordEvents, startFixtureHttp, testLogger, textOf, type FixtureHttpServer } from "../fixtures/upstreams.js";

/**
 * What bounds one call to an HTTP upstream (README: Upstream timeouts): requestTimeoutMs when set,
 * else nothing of taskgate's own. The HTTP client's limits are shortened here to SHORT_LIMIT_MS
 * for every request that does not set its own, as undici's defaults (300 s for the headers, 300 s
 * between body chunks) would: calls that outlast them show that no such limit governs, in seconds
 * rather than minutes.
 */
const SHORT_LIMIT_MS = 400;
const LONGER_THAN_LIMIT_MS = 1_200;

const dispatch = Agent.prototype.dispatch;
beforeAll(() => {
  Agent.prototype.dispatch = function (this: Agent, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
    return dispatch.call(this, { headersTimeout: SHORT_LIMIT_MS, bodyTimeout: SHORT_LIMIT_MS, ...options }, handler);
  };
});
afterAll(() => {
  Agent.prototype.dispatch = dispatch;
});

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

  it("a JSON answer that comes after the HTTP client's own limits still completes", async () => {
    const { c, events } = await started(["--json"]);
    const response = await call(c, "slow", { steps: 1, delayMs: LONGER_THAN_LIMIT_MS });
    expect(textOf(response)).toBe("done after 1 steps");
    expect(c.isReady()).toBe(true);
    expect(wentDown(events)).toBe(false);
  });

  it("an SSE stream silent for longer than the HTTP client's own limits still completes", async () => {
    // No event store: a stream cut by a client limit could not be resumed.
    const { c, events } = await started(["--no-events"]);
    const response = await call(c, "slow", { steps: 1, delayMs: LONGER_THAN_LIMIT_MS });
    expect(textOf(response)).toBe("done after 1 steps");
    expect(wentDown(events)).toBe(false);
  });

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
});
