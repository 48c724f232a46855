import { describe, expect, it } from "vitest";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.js";
import { GATEWAY_CLIENT_CAPABILITIES, UPSTREAM_PROTOCOL_VERSION, UpstreamError, type UpstreamEvent } from "../../src/upstream/connector.js";
import { SessionCore } from "../../src/upstream/session-core.js";
import { waitFor } from "../helpers/wait-for.js";
import { testLogger } from "../fixtures/upstreams.js";

const INIT_RESULT = { protocolVersion: UPSTREAM_PROTOCOL_VERSION, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } };

/** A core whose link records what it sent and answers `initialize` like a server would; `session`: the HTTP session it is on. */
function coreWithLink(options: { requestTimeoutMs?: number } = {}, session?: string) {
  const sent: JsonRpcMessage[] = [];
  const events: UpstreamEvent[] = [];
  const core: SessionCore = new SessionCore(
    { name: "u", logger: testLogger, initializeTimeoutMs: 1_000, ...options },
    {
      send: async (message) => {
        sent.push(message);
        if ("method" in message && message.method === "initialize" && "id" in message)
          queueMicrotask(() => core.receive({ jsonrpc: "2.0", id: message.id, result: INIT_RESULT }));
      },
      ...(session === undefined ? {} : { session: () => session }),
    },
  );
  core.onEvent((e) => events.push(e));
  return { core, sent, events };
}

const methods = (sent: JsonRpcMessage[]) => sent.map((m) => ("method" in m ? m.method : `response ${String(m.id)}`));

describe("SessionCore", () => {
  it("initializes with taskgate's capabilities, then sends initialized, then is ready", async () => {
    const { core, sent, events } = coreWithLink();
    await core.handshake();
    expect(methods(sent)).toEqual(["initialize", "notifications/initialized"]);
    expect(sent[0]).toMatchObject({ params: { protocolVersion: UPSTREAM_PROTOCOL_VERSION, capabilities: GATEWAY_CLIENT_CAPABILITIES } });
    expect(core.initializeResult()).toEqual(INIT_RESULT);
    expect(events).toEqual([{ kind: "state", ready: true }]);
    expect(core.lastError()).toBeUndefined();
  });

  it("rejects requests before any handshake, and lets requests made during one wait for it", async () => {
    const { core } = coreWithLink();
    await expect(core.request({ method: "tools/list" })).rejects.toMatchObject({ reason: "closed", message: "upstream 'u' is not ready: not started" });
    const handshake = core.handshake();
    let id: string | number | undefined;
    const during = core.request({ method: "tools/list", onId: (i) => (id = i) });
    await handshake;
    const sentId = await waitFor(() => id, { what: "request sent after the handshake" });
    core.receive({ jsonrpc: "2.0", id: sentId, result: { tools: [] } });
    await expect(during).resolves.toMatchObject({ id: sentId });
  });

  it("answers ping itself and never emits it", async () => {
    const { core, sent, events } = coreWithLink();
    await core.handshake();
    core.receive({ jsonrpc: "2.0", id: "p", method: "ping" });
    await waitFor(() => sent.length === 3, { what: "ping answered" });
    expect(sent[2]).toEqual({ jsonrpc: "2.0", id: "p", result: {} });
    expect(events.filter((e) => e.kind === "request")).toEqual([]);
  });

  it("answers a server request with an error while not ready", async () => {
    const { core, sent } = coreWithLink();
    core.receive({ jsonrpc: "2.0", id: 9, method: "roots/list" });
    await waitFor(() => sent.length === 1, { what: "answered" });
    expect(sent[0]).toMatchObject({ id: 9, error: { code: -32603 } });
  });

  it("passes each server request answer upstream once, and none after the session is gone", async () => {
    const { core, sent } = coreWithLink();
    await core.handshake();
    core.receive({ jsonrpc: "2.0", id: 1, method: "elicitation/create", params: {} });
    core.receive({ jsonrpc: "2.0", id: 2, method: "elicitation/create", params: {} });
    await core.respond(1, { result: { action: "decline" } });
    await core.respond(1, { result: { action: "decline" } });
    core.markDown(new UpstreamError("upstream process exited (code 1, signal null)", "exited"), { failPending: true });
    await core.respond(2, { result: { action: "decline" } });
    expect(methods(sent).slice(2)).toEqual(["response 1"]);
  });

  it("passes the answer to a question of its own session upstream whether the question or the answer named that session, id 0 too", async () => {
    const { core, sent } = coreWithLink({}, "own");
    await core.handshake();
    // Heard on the GET stream (no session named), answered for a task whose link names this session.
    core.receive({ jsonrpc: "2.0", id: 0, method: "elicitation/create", params: {} });
    await core.respond(0, { result: { action: "accept" } }, { session: "own" });
    // Heard on a request that named this session, answered without naming one.
    core.receive({ jsonrpc: "2.0", id: 1, method: "sampling/createMessage", params: {} }, "r1", "own");
    await core.respond(1, { result: { role: "assistant" } });
    // Another replica's session numbers its own: its id 0 is not this session's, and the reverse.
    core.receive({ jsonrpc: "2.0", id: 0, method: "elicitation/create", params: {} }, "r2", "other");
    await core.respond(0, { result: { action: "decline" } });
    await core.respond(0, { result: { action: "cancel" } }, { session: "other" });
    expect(sent.slice(2)).toEqual([
      { jsonrpc: "2.0", id: 0, result: { action: "accept" } },
      { jsonrpc: "2.0", id: 1, result: { role: "assistant" } },
      { jsonrpc: "2.0", id: 0, result: { action: "cancel" } },
    ]);
  });

  it("on markDown fails what is in flight, emits not-ready with the reason, and keeps the last result", async () => {
    const { core, events } = coreWithLink();
    await core.handshake();
    const inFlight = core.request({ method: "tools/call" });
    const error = new UpstreamError("upstream process exited (code null, signal SIGKILL)", "exited");
    core.markDown(error, { failPending: true });
    await expect(inFlight).rejects.toBe(error);
    expect(events.at(-1)).toEqual({ kind: "state", ready: false, reason: error.message });
    expect(core.lastError()).toBe(error.message);
    expect(core.initializeResult()).toEqual(INIT_RESULT);
    await expect(core.request({ method: "tools/list" })).rejects.toMatchObject({ reason: "exited" });
  });

  it("after requestTimeoutMs rejects with 'timeout' and sends notifications/cancelled itself", async () => {
    const { core, sent } = coreWithLink({ requestTimeoutMs: 30 });
    await core.handshake();
    let id: string | number | undefined;
    await expect(core.request({ method: "tools/call", onId: (i) => (id = i) })).rejects.toMatchObject({ reason: "timeout" });
    expect(sent.at(-1)).toMatchObject({ method: "notifications/cancelled", params: { requestId: id } });
  });
});
