import { afterEach, describe, expect, it } from "vitest";
import type { StdioUpstreamConfig } from "../../src/config/schema.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { StdioConnector } from "../../src/upstream/stdio/stdio-connector.js";
import { waitFor } from "../helpers/wait-for.js";
import { BLOCKING_SERVER, capturingLogger, groupAlive, processAlive, recordEvents, stdioConfig, testLogger, textOf } from "../fixtures/upstreams.js";

describe("stdio connector against the blocking fixture", () => {
  const open: StdioConnector[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  function connector(extraArgs: string[] = [], overrides: Partial<StdioUpstreamConfig> = {}): StdioConnector {
    const c = new StdioConnector("fixture", stdioConfig([BLOCKING_SERVER, "stdio", ...extraArgs], overrides), testLogger);
    open.push(c);
    return c;
  }

  const call = (c: StdioConnector, name: string, args: Record<string, unknown> = {}, extra: { signal?: AbortSignal; progressToken?: string } = {}) =>
    c.request({
      method: "tools/call",
      params: { name, arguments: args, ...(extra.progressToken && { _meta: { progressToken: extra.progressToken } }) },
      ...(extra.signal && { signal: extra.signal }),
    });

  it("relays progress notifications as events, without relatedTo (stdio cannot know)", async () => {
    const c = connector();
    const events = recordEvents(c);
    await c.start();
    const response = await call(c, "slow", { steps: 3, delayMs: 10 }, { progressToken: "p-1" });
    expect(textOf(response)).toBe("done after 3 steps");
    const progress = events.filter((e) => e.kind === "notification" && e.message.method === "notifications/progress");
    expect(progress.map((e) => (e.kind === "notification" ? e.message.params?.progress : undefined))).toEqual([1, 2, 3]);
    expect(progress.every((e) => !("relatedTo" in e))).toBe(true);
  });

  it("surfaces elicitation/create as a request event and completes the call once answered", async () => {
    const c = connector();
    const answers: Array<Promise<void>> = [];
    recordEvents(c, (event) => {
      answers.push(c.respond(event.message.id, { result: { action: "accept", content: { answer: "blue" } } }));
    });
    await c.start();
    const response = await call(c, "ask", { question: "favourite colour?" });
    expect(textOf(response)).toBe("answer: blue");
    await Promise.all(answers);
  });

  it("answers a second response to the same upstream request by dropping it", async () => {
    const c = connector();
    let answered = 0;
    const answers: Array<Promise<void>> = [];
    recordEvents(c, (event) => {
      const outcome = { result: { action: "accept", content: { answer: `try ${++answered}` } } };
      answers.push(c.respond(event.message.id, outcome).then(() => c.respond(event.message.id, outcome)));
    });
    await c.start();
    expect(textOf(await call(c, "ask", { question: "?" }))).toBe("answer: try 1");
    expect(textOf(await call(c, "echo", { message: "still fine" }))).toBe("Echo: still fine");
    await Promise.all(answers);
  });

  it("rejects in-flight calls with 'exited' on SIGKILL and comes back ready by itself", async () => {
    const c = connector();
    const events = recordEvents(c);
    await c.start();
    const pid = Number(textOf(await call(c, "pid")));
    const inFlight = call(c, "hang");
    const outcome = inFlight.catch((err: unknown) => err);
    process.kill(pid, "SIGKILL");
    const err = await outcome;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ reason: "exited" });
    expect((err as Error).message).toMatch(/^upstream process exited \(code null, signal SIGKILL\)/);
    await waitFor(() => c.isReady(), { what: "connector ready again" });
    expect(c.pid()).not.toBe(pid);
    expect(textOf(await call(c, "echo", { message: "back" }))).toBe("Echo: back");
    const states = events.filter((e) => e.kind === "state");
    expect(states.map((e) => e.kind === "state" && e.ready)).toEqual([true, false, true]);
  });

  it("while restarting, rejects new requests at once with the reason", async () => {
    const c = connector([], { restartInitialDelayMs: 2_000, restartMaxDelayMs: 2_000 });
    await c.start();
    const pid = Number(textOf(await call(c, "pid")));
    process.kill(pid, "SIGKILL");
    await waitFor(() => !c.isReady(), { what: "connector not ready" });
    expect(c.lastError()).toMatch(/upstream process exited/);
    await expect(call(c, "echo", { message: "x" })).rejects.toMatchObject({ reason: "exited" });
  });

  it("drops a line longer than maxLineBytes and a line that is not JSON, and keeps working", async () => {
    const { logger, records } = capturingLogger();
    const config = stdioConfig([BLOCKING_SERVER, "stdio"], { maxLineBytes: 64 * 1024 });
    const c = new StdioConnector("fixture", config, logger);
    open.push(c);
    await c.start();
    expect(textOf(await call(c, "noise", { bytes: 300 * 1024 }))).toBe("after noise");
    expect(textOf(await call(c, "echo", { message: "after" }))).toBe("Echo: after");
    expect(c.isReady()).toBe(true);
    const warnings = records.filter((r) => r.level === 40).map((r) => r.msg);
    expect(warnings).toContain("dropped a line from the upstream longer than maxLineBytes");
    expect(warnings).toContain("skipped a line from the upstream that is not a JSON-RPC message");
  });

  it("stops waiting when the caller aborts, and the connector stays usable", async () => {
    const c = connector();
    await c.start();
    const controller = new AbortController();
    const hanging = call(c, "hang", {}, { signal: controller.signal });
    controller.abort(new Error("client went away"));
    await expect(hanging).rejects.toMatchObject({ name: "UpstreamError", reason: "closed" });
    expect(textOf(await call(c, "echo", { message: "ok" }))).toBe("Echo: ok");
  });

  it("close() ends the whole process group, grandchildren included", async () => {
    const c = connector();
    await c.start();
    const pgid = c.pid()!;
    const grandchild = Number(textOf(await call(c, "spawn_child")));
    expect(processAlive(grandchild)).toBe(true);
    await c.close();
    expect(groupAlive(pgid)).toBe(false);
    await waitFor(() => !processAlive(grandchild), { timeoutMs: 10_000, what: "grandchild gone" });
  });

  it("close() escalates to SIGKILL when the server ignores stdin and SIGTERM", async () => {
    const c = connector(["--stubborn"], { shutdownGraceMs: 150 });
    await c.start();
    const pgid = c.pid()!;
    await c.close();
    expect(groupAlive(pgid)).toBe(false);
  });

  it("start() rejects clearly when the command does not exist, and close() stops the retries", async () => {
    const c = new StdioConnector("ghost", { ...stdioConfig([]), command: "taskgate-no-such-command" }, testLogger);
    open.push(c);
    await expect(c.start()).rejects.toThrow("cannot start upstream 'ghost': spawn taskgate-no-such-command ENOENT");
    expect(c.isReady()).toBe(false);
    expect(c.lastError()).toBe("cannot start upstream 'ghost': spawn taskgate-no-such-command ENOENT");
  });

  it("start() rejects clearly when the process exits before initializing", async () => {
    const c = new StdioConnector("quitter", stdioConfig(["-e", "console.error('bad flag --nope'); process.exit(3)"]), testLogger);
    open.push(c);
    await expect(c.start()).rejects.toThrow(/^cannot start upstream 'quitter': upstream process exited \(code 3, signal null\): bad flag --nope$/);
  });
});
