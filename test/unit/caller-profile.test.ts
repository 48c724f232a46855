import { describe, expect, it } from "vitest";
import { callerProfile, listsByProfile, ProfilePools } from "../../src/upstream/mux/profiles.js";

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
    // Nested keys in another order: another text, the same key, each time it is asked again.
    const nested = callerProfile({ elicitation: { form: {}, url: {} }, roots: { listChanged: true } }).key;
    for (let i = 0; i < 2; i++) {
      expect(callerProfile({ roots: { listChanged: true }, elicitation: { url: {}, form: {} } }).key).toBe(nested);
      expect(callerProfile({ elicitation: { form: {}, url: {} }, roots: { listChanged: true } }).key).toBe(nested);
    }
    expect(callerProfile({ elicitation: { form: {} }, roots: { listChanged: true } }).key).not.toBe(nested);
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

describe("the profiles of one upstream", () => {
  /** A pool as ProfilePools sees it: members, idle ones, closing. */
  const fakePools = (size: number) => {
    const made: Array<{ members: number; hasIdle: boolean; closed: boolean; coolDown(): boolean; close(): Promise<void> }> = [];
    const pools = new ProfilePools("up", size, () => {
      const pool = {
        members: 0,
        hasIdle: false,
        closed: false,
        coolDown: () => false,
        close: async () => void (pool.closed = true),
      };
      made.push(pool);
      return { pool: pool as never, lane: undefined };
    });
    return { pools, made };
  };

  it("reads a capabilities object once, and gives each later call with it the same profile", () => {
    const { pools } = fakePools(2);
    let reads = 0;
    const session = Object.defineProperty({} as Record<string, unknown>, "elicitation", { enumerable: true, get: () => (reads++, {}) });
    const first = pools.of(session);
    for (let i = 0; i < 3; i++) expect(pools.of(session)).toBe(first);
    expect(reads).toBe(1);
    // Another object declaring the same: the same profile.
    expect(pools.of({ elicitation: {} })).toBe(first);
    expect(pools.of({ sampling: {} })).not.toBe(first);
  });

  it("gives a call whose profile was forgotten while it waited the pool its profile has now, never the closed one", () => {
    const { pools } = fakePools(1);
    const asking = { elicitation: {} };
    const taken = pools.of(asking).pool as unknown as { closed: boolean };
    // A third profile past poolSize + 1: the one without members is forgotten and its pool closed.
    pools.of({ sampling: {} });
    expect(taken.closed).toBe(true);
    const now = pools.currentPool(taken as never, asking);
    expect(now).not.toBe(taken);
    expect(pools.currentPool(now, asking)).toBe(now);
  });
});
