import { describe, expect, it } from "vitest";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../src/jsonrpc/message.js";
import { modernHeaders } from "../../src/upstream/modern/envelope.js";
import { ModernCalls } from "../../src/upstream/modern/rounds.js";

const ASK = { method: "elicitation/create", params: { message: "Sure?", requestedSchema: { type: "object", properties: {} } } };

/** An upstream that answers each round with the next of `rounds`, and a holder that records the questions. */
function world(rounds: Array<Record<string, unknown>>) {
  const sent: Array<Record<string, unknown>> = [];
  const asked: Array<{ request: JsonRpcRequest; relatedTo: JsonRpcId }> = [];
  const cancelled: JsonRpcId[] = [];
  let id = 0;
  const calls: ModernCalls = new ModernCalls("up", {
    send: async (_method, params, { onId }) => {
      onId(++id);
      sent.push(params);
      return { jsonrpc: "2.0", id, result: rounds.shift() ?? { resultType: "complete", content: [] } } as JsonRpcResponse;
    },
    ask: (request, relatedTo) => (asked.push({ request, relatedTo }), true),
    cancel: (wireId) => void cancelled.push(wireId),
  });
  return { calls, sent, asked, cancelled };
}

describe("the upstream's MRTR rounds (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)", () => {
  it("asks each input request as a question related to the call, then retries with the answers and the upstream's requestState", async () => {
    const { calls, sent, asked } = world([
      { resultType: "input_required", inputRequests: { sure: ASK }, requestState: "opaque-1" },
      { resultType: "complete", content: [{ type: "text", text: "done" }] },
    ]);
    const response = calls.request({
      method: "tools/call",
      params: { name: "t", arguments: {} },
      clientCapabilities: { elicitation: {}, extensions: { x: {} } },
    });
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toMatchObject({ request: { method: "elicitation/create", params: ASK.params }, relatedTo: 1 });
    expect(calls.answer(asked[0]!.request.id, { result: { action: "accept", content: {} } })).toBe(true);
    expect(await response).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "done" }] } });
    expect(sent[1]).toMatchObject({ inputResponses: { sure: { action: "accept", content: {} } }, requestState: "opaque-1" });
    // Only the questions the caller can answer are declared upstream.
    expect((sent[0]!._meta as Record<string, unknown>)["io.modelcontextprotocol/clientCapabilities"]).toEqual({ elicitation: {} });
    // An answer is taken once.
    expect(calls.answer(asked[0]!.request.id, { result: {} })).toBe(false);
  });

  it("declines an elicitation that got an error instead of an answer, and fails the call for a sampling request", async () => {
    const elicit = world([{ resultType: "input_required", inputRequests: { sure: ASK } }]);
    const first = elicit.calls.request({ method: "tools/call", params: { name: "t" } });
    await expect.poll(() => elicit.asked.length).toBe(1);
    elicit.calls.answer(elicit.asked[0]!.request.id, { error: { code: -32603, message: "timed out" } });
    await first;
    expect(elicit.sent[1]).toMatchObject({ inputResponses: { sure: { action: "cancel" } } });
    expect(elicit.sent[1]).not.toHaveProperty("requestState");

    const sample = world([{ resultType: "input_required", inputRequests: { s: { method: "sampling/createMessage", params: {} } } }]);
    const second = sample.calls.request({ method: "tools/call", params: { name: "t" } });
    await expect.poll(() => sample.asked.length).toBe(1);
    sample.calls.answer(sample.asked[0]!.request.id, { error: { code: -32601, message: "no sampling" } });
    expect(await second).toMatchObject({ error: { code: -32601, message: expect.stringContaining("no sampling") } });
    expect(sample.sent).toHaveLength(1);
  });

  it("sends no further round once the call is cancelled, and rejects when its caller stops waiting", async () => {
    const { calls, sent, asked } = world([{ resultType: "input_required", inputRequests: { sure: ASK } }]);
    let stop: (reason?: unknown) => void = () => undefined;
    const response = calls.request({ method: "tools/call", params: { name: "t" }, stopWaiting: (s) => (stop = s) });
    await expect.poll(() => asked.length).toBe(1);
    expect(calls.cancel(1, "user")).toBe(true);
    calls.answer(asked[0]!.request.id, { result: { action: "cancel" } });
    stop("gone");
    await expect(response).rejects.toMatchObject({ reason: "closed" });
    expect(sent).toHaveLength(1);
  });

  it("refuses a result type taskgate did not negotiate, and input_required on a method that may not ask", async () => {
    const task = world([{ resultType: "task", taskId: "t1" }]);
    expect(await task.calls.request({ method: "tools/call", params: { name: "t" } })).toMatchObject({
      error: { code: -32603, message: expect.stringContaining("resultType 'task'") },
    });
    const list = world([{ resultType: "input_required", inputRequests: { sure: ASK } }]);
    expect(await list.calls.request({ method: "tools/list" })).toMatchObject({
      error: { message: expect.stringContaining("only tools/call, prompts/get and resources/read") },
    });
  });

  it("mirrors the request in the 2026-07-28 headers, encoding a name that is not plain ASCII (SEP-2243)", () => {
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
    expect(modernHeaders({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "échéance", _meta: meta } })).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": `=?base64?${Buffer.from("échéance").toString("base64")}?=`,
    });
    expect(modernHeaders({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })).toBeUndefined();
  });
});
