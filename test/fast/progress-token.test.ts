import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../src/jsonrpc/message.js";
import type { MessageSink } from "../../src/jsonrpc/sink.js";
import { Metrics } from "../../src/observability/metrics.js";
import type { CallClient, CallOptions } from "../../src/upstream/caller.js";
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
});
