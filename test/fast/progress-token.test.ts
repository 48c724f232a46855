import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../src/jsonrpc/message.js";
import type { MessageSink } from "../../src/jsonrpc/sink.js";
import { Audit } from "../../src/observability/audit.js";
import { Metrics } from "../../src/observability/metrics.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { TaskEngine } from "../../src/tasks/engine.js";
import type { SyncOptions } from "../../src/tasks/sync-call.js";
import type { CallClient, CallOptions, UpstreamCaller } from "../../src/upstream/caller.js";
import type { UpstreamConnector, UpstreamEvent, UpstreamRequest } from "../../src/upstream/connector.js";
import { Relay } from "../../src/upstream/mux/relay.js";

const logger = pino({ level: "silent" });
const NOWHERE: MessageSink = { send: () => false };

/** An upstream that answers every request at once and keeps what it was sent. */
class RecordingConnector implements UpstreamConnector {
  readonly name = "up";
  readonly sent: UpstreamRequest[] = [];
  private nextId = 1;
  start = async () => undefined;
  initializeResult = () => undefined;
  isReady = () => true;
  lastError = () => undefined;
  generation = () => undefined;
  notify = async () => undefined;
  respond = async () => undefined;
  close = async () => undefined;
  session = () => undefined;
  onEvent(_listener: (event: UpstreamEvent) => void): void {}

  async request(req: UpstreamRequest): Promise<JsonRpcResponse> {
    this.sent.push(req);
    const id = this.nextId++;
    req.onId?.(id);
    return { jsonrpc: "2.0", id, result: { content: [] } };
  }
}

function toolCall(id: JsonRpcId, meta?: Record<string, unknown>): JsonRpcRequest {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {}, ...(meta ? { _meta: meta } : {}) } };
}

describe("the progress token the upstream is given", () => {
  const client: CallClient = { sessionId: "s", capabilities: {} };

  it("is the engine's own for a call it tracks, none when it asks for no progress, and the client's own mapped either way", async () => {
    const connector = new RecordingConnector();
    const relay = new Relay(connector, logger, "r1", new Metrics());
    const tokenSent = async (request: JsonRpcRequest, options: CallOptions) => {
      await relay.call(client, request, NOWHERE, options);
      return (connector.sent.at(-1)?.params?._meta as Record<string, unknown> | undefined)?.progressToken;
    };

    expect(await tokenSent(toolCall(1), { trackProgress: true })).toEqual(expect.any(String));
    expect(await tokenSent(toolCall(2), { trackProgress: true, askProgress: false })).toBeUndefined();
    expect(await tokenSent(toolCall(3), {})).toBeUndefined();
    const mapped = await tokenSent(toolCall(4, { progressToken: "mine" }), { trackProgress: true, askProgress: false });
    expect(mapped).toEqual(expect.any(String));
    expect(mapped).not.toBe("mine");
  });

  it("is asked for by the synchronous round only when the call may become a task", async () => {
    const seen: CallOptions[] = [];
    const caller: UpstreamCaller = {
      call: async (_client, request, _sink, options = {}) => (seen.push(options), { jsonrpc: "2.0", id: request.id, result: {} }),
      cancel: async () => undefined,
      answer: async () => false,
    };
    const store = new MemoryStore();
    const options = {
      replicaId: "r1",
      leaseMs: 3_000,
      cancelGraceMs: 1_000,
      statusWriteIntervalMs: 100,
      reaperIntervalMs: 1_000,
      maxAttempts: 1,
      mrtrTimeoutMs: 60_000,
    };
    const engine = new TaskEngine({ store, logger, metrics: new Metrics(), audit: new Audit(logger), options, clock: Date.now });
    const run = async (id: number, sync: SyncOptions) => {
      const call = {
        caller,
        upstream: "up",
        client,
        principal: "alice",
        taskProtocol: "extension" as const,
        request: toolCall(id),
        ttlMs: 60_000,
        pollIntervalMs: 1_000,
      };
      expect(await engine.sync.start(call, { method: "tools/call", name: "echo" }, NOWHERE, sync)).toHaveProperty("inline");
      return seen.at(-1);
    };

    expect(await run(1, {})).toMatchObject({ trackProgress: true, askProgress: false });
    expect(await run(2, { detachAfterMs: 5_000 })).toMatchObject({ trackProgress: true, askProgress: true });
    expect(await run(3, { detachOnInput: true })).toMatchObject({ trackProgress: true, askProgress: true });
    await store.close();
  });
});
