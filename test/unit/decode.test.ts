import { describe, expect, it } from "vitest";
import { decodeMessage } from "../../src/jsonrpc/decode.js";

describe("decoding untrusted JSON-RPC", () => {
  it("accepts requests, notifications and responses", () => {
    for (const m of [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x" } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 3, result: {} },
      { jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } },
    ])
      expect(decodeMessage(JSON.stringify(m))).toEqual({ ok: true, message: m });
  });

  it("tells broken JSON from invalid messages and batches", () => {
    expect(decodeMessage("{")).toMatchObject({ ok: false, kind: "parse_error", id: null });
    expect(decodeMessage("[]")).toMatchObject({ ok: false, kind: "batch_unsupported" });
    expect(decodeMessage('{"jsonrpc":"2.0","id":5,"method":7}')).toMatchObject({ ok: false, kind: "invalid_request", id: 5 });
    expect(decodeMessage('{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}')).toMatchObject({ ok: false, kind: "invalid_request" });
    expect(decodeMessage("null")).toMatchObject({ ok: false, kind: "invalid_request", id: null });
  });

  it("refuses a params._meta that is not an object, which an upstream might never answer", () => {
    for (const meta of [[], "x", 1, null])
      expect(decodeMessage(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list", params: { _meta: meta } }))).toMatchObject({
        ok: false,
        kind: "invalid_request",
        id: 8,
        detail: expect.stringContaining("_meta"),
      });
    expect(decodeMessage(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list", params: { _meta: { a: 1 } } }))).toMatchObject({ ok: true });
  });
});
