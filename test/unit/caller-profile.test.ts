import { describe, expect, it } from "vitest";
import { callerProfile, listsByProfile } from "../../src/upstream/mux/profiles.js";

const UI = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };

describe("a caller's capability profile", () => {
  it("keeps what the upstream may act on, as declared, and leaves the tasks extension and the rest out", () => {
    const { capabilities } = callerProfile({
      elicitation: { form: {} },
      sampling: {},
      roots: { listChanged: true },
      tasks: { list: {} },
      experimental: { x: {} },
      extensions: { ...UI, "io.modelcontextprotocol/tasks": {} },
    });
    expect(capabilities).toEqual({ elicitation: { form: {} }, sampling: {}, roots: { listChanged: true }, extensions: UI });
    expect(callerProfile({ extensions: { "io.modelcontextprotocol/tasks": {} } }).capabilities).toEqual({});
  });

  it("gives callers that declared the same one key, whatever the order, and others another", () => {
    const a = callerProfile({ elicitation: {}, extensions: UI });
    const b = callerProfile({ extensions: UI, elicitation: {}, tasks: {} });
    expect(a.key).toBe(b.key);
    expect(callerProfile({ elicitation: {} }).key).not.toBe(a.key);
    expect(callerProfile({}).key).not.toBe(callerProfile({ roots: {} }).key);
    expect(callerProfile({ roots: { listChanged: true } }).key).not.toBe(callerProfile({ roots: {} }).key);
    expect(callerProfile({ extensions: { ["x".repeat(100_000)]: {} } }).key.length).toBeLessThan(64);
  });

  it("declares roots for every caller when upstreams[].roots is set, and taskgate's own set for no caller", () => {
    expect(callerProfile({}, true).capabilities).toEqual({ roots: {} });
    expect(callerProfile({ roots: { listChanged: true } }, true).capabilities).toEqual({ roots: { listChanged: true } });
    expect(callerProfile(undefined)).toEqual({ key: "taskgate", capabilities: undefined });
  });

  it("sends the lists of a caller that declared an extension to its profile, and every other caller's home", () => {
    expect(listsByProfile({ extensions: UI })).toBe(true);
    expect(listsByProfile({ elicitation: {}, sampling: {}, roots: {} })).toBe(false);
    expect(listsByProfile({ extensions: { "io.modelcontextprotocol/tasks": {} } })).toBe(false);
  });
});
