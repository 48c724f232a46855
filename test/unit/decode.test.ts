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

  it("refuses nesting deeper than the bound, naming where, and keeps the id", () => {
    const nest = (depth: number, key = "a"): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { [key]: v };
      return v;
    };
    const message = (inner: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 9, method: "initialize", params: { capabilities: inner } });
    // message (1) > params (2) > the value of capabilities (3 onwards): 62 levels of it fit in 64.
    expect(decodeMessage(message(nest(62)), { maxDepth: 64 })).toMatchObject({ ok: true });
    expect(decodeMessage(message(nest(63)), { maxDepth: 64 })).toMatchObject({
      ok: false,
      kind: "invalid_request",
      id: 9,
      detail: expect.stringMatching(/^params\.capabilities\..*nested deeper than 64 levels/),
    });
    // Built as text: JSON.stringify itself cannot go this deep.
    const huge = `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"capabilities":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}}`;
    expect(decodeMessage(huge, { maxDepth: 64 })).toMatchObject({ ok: false, kind: "invalid_request", id: 9 });
    // Without a bound depth is not judged here; an upstream's reader gives its own (upstreams[].*.maxJsonDepth).
    expect(decodeMessage(message(nest(200)))).toMatchObject({ ok: true });
    // A response too deep is flagged as the answer to its id, refused for its depth.
    const answer = `{"jsonrpc":"2.0","id":4,"result":{"structuredContent":${'{"a":'.repeat(300)}1${"}".repeat(300)}}}`;
    expect(decodeMessage(answer, { maxDepth: 256 })).toMatchObject({ ok: false, id: 4, answer: true, tooDeep: true });
  });

  it("walks an own __proto__ key like any other", () => {
    const deep = "[".repeat(100) + "]".repeat(100);
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"x":${deep}}}}`;
    expect(decodeMessage(text, { maxDepth: 64 })).toMatchObject({ ok: false, kind: "invalid_request", detail: expect.stringContaining("params.__proto__.x") });
  });

  it("names the first wrong field in the order of the message's shape, with the same words for the same inputs", () => {
    const cases: Array<[unknown, string, string | number | null]> = [
      [{ jsonrpc: "2.0", id: 5, method: 7 }, "method: Invalid input: expected string, received number", 5],
      [{ jsonrpc: "1.0", id: true, method: 7 }, 'jsonrpc: Invalid input: expected "2.0"', null],
      [{ jsonrpc: "2.0", id: null, method: "x" }, "id: Invalid input", null],
      [{ jsonrpc: "2.0", id: 1, method: "" }, "method: Too small: expected string to have >=1 characters", 1],
      [{ jsonrpc: "2.0", id: 1, method: "x", params: null }, "params: Invalid input: expected record, received null", 1],
      [{ jsonrpc: "2.0", id: 1 }, "result: Invalid input: expected record, received undefined", 1],
      [{ jsonrpc: "2.0", id: 1, result: { _meta: 1 } }, "result._meta: _meta must be an object", 1],
      [{ jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "x" } }, "error.code: Invalid input: expected int, received number", 1],
      [{ jsonrpc: "2.0", id: 1, error: { code: 1 } }, "error.message: Invalid input: expected string, received undefined", 1],
      [{ jsonrpc: "2.0", id: 1, error: "x" }, "error: Invalid input: expected object, received string", 1],
      [{ jsonrpc: "2.0", error: { code: 1, message: "x" } }, "id: Invalid input", null],
    ];
    for (const [message, detail, id] of cases) {
      // A response (no method) with a usable id is flagged as the answer to that request.
      const answer = id !== null && !("method" in (message as object)) ? { answer: true } : {};
      expect(decodeMessage(JSON.stringify(message))).toEqual({ ok: false, kind: "invalid_request", id, detail, ...answer });
    }
  });

  it("keeps only the fields of the message's shape, and a null id on an error response", () => {
    expect(decodeMessage('{"jsonrpc":"2.0","id":1,"method":"x","extra":1,"params":{"a":1}}')).toEqual({
      ok: true,
      message: { jsonrpc: "2.0", id: 1, method: "x", params: { a: 1 } },
    });
    expect(decodeMessage('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{"d":1},"x":2}}')).toEqual({
      ok: true,
      message: { jsonrpc: "2.0", id: null, error: { code: -32700, message: "m", data: { d: 1 } } },
    });
  });
});
