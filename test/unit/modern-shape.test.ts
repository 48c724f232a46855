import { describe, expect, it } from "vitest";
import { upstreamParams } from "../../src/dialects/modern/shape.js";
import { copyWithout } from "../../src/util/with-fields.js";

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
  progressToken: 7,
};

describe("upstreamParams", () => {
  it("drops the modern _meta keys and params.task of a tools/call, keeping the rest in order", () => {
    const params = { name: "echo", task: { ttl: 5 }, arguments: { text: "hi" }, _meta: meta };
    const out = upstreamParams("tools/call", params);
    expect(out).toEqual({ name: "echo", arguments: { text: "hi" }, _meta: { progressToken: 7 } });
    expect(Object.keys(out!)).toEqual(["name", "arguments", "_meta"]);
    expect(params._meta).toBe(meta);
  });

  it("keeps params.task on another method, and no _meta when only modern keys were in it", () => {
    const { progressToken: _token, ...modernOnly } = meta;
    expect(upstreamParams("resources/read", { uri: "u", task: { ttl: 5 }, _meta: modernOnly })).toEqual({ uri: "u", task: { ttl: 5 } });
    expect(upstreamParams("prompts/get", undefined)).toBeUndefined();
  });

  it("copies a field named __proto__ as a field, as a spread does", () => {
    const params = JSON.parse('{"name":"echo","__proto__":{"polluted":true},"_meta":{"__proto__":{"x":1}}}') as Record<string, unknown>;
    const out = upstreamParams("tools/call", params)!;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(Object.hasOwn(out._meta as object, "__proto__")).toBe(true);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    const rest = copyWithout(params, "name", "_meta");
    expect(Object.keys(rest)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(rest)).toBe(Object.prototype);
  });
});
