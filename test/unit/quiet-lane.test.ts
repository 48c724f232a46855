import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../src/observability/logger.js";
import { Elimination } from "../../src/upstream/mux/elimination.js";
import { QUIET_AFTER, quietKey, Quietness } from "../../src/upstream/mux/quiet-lane.js";

const QUIET = { asked: false, quiet: true };

describe("which tools are quiet", () => {
  it("counts a tool quiet after QUIET_AFTER quiet runs alone in a row, and not before", () => {
    const q = new Quietness();
    for (let i = 1; i < QUIET_AFTER; i++) expect(q.ranAlone("t", QUIET)).toBe(false);
    expect(q.isQuiet("t")).toBe(false);
    // The run that makes it quiet says so (calls of it still queued to run alone move to the lane); later ones do not.
    expect(q.ranAlone("t", QUIET)).toBe(true);
    expect(q.isQuiet("t")).toBe(true);
    expect(q.ranAlone("t", QUIET)).toBe(false);
  });

  it("starts over after an unclean run, or a doubt from the lane (a question heard there)", () => {
    const q = new Quietness();
    for (let i = 0; i < QUIET_AFTER; i++) q.ranAlone("t", QUIET);
    q.ranAlone("t", { asked: false, quiet: false });
    expect(q.isQuiet("t")).toBe(false);
    for (let i = 0; i < QUIET_AFTER; i++) q.ranAlone("t", QUIET);
    q.doubt("t");
    expect(q.isQuiet("t")).toBe(false);
  });

  it("never counts a tool seen asking quiet again", () => {
    const q = new Quietness();
    q.ranAlone("t", { asked: true, quiet: true });
    for (let i = 0; i < QUIET_AFTER * 2; i++) q.ranAlone("t", QUIET);
    q.doubt("t");
    for (let i = 0; i < QUIET_AFTER * 2; i++) q.ranAlone("t", QUIET);
    expect(q.isQuiet("t")).toBe(false);
  });

  it("knows a call by its method and the name it calls; a call without one is never shared", () => {
    expect(quietKey({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } })).toBe("tools/call\u0000echo");
    expect(quietKey({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "file:///a" } })).toBe("resources/read\u0000file:///a");
    expect(quietKey({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 7 } })).toBeUndefined();
  });
});

describe("attribution by elimination", () => {
  afterEach(() => vi.useRealTimers());

  it("gives a held question to the one call left once the others ended", async () => {
    const e = new Elimination<string>(silentLogger);
    const held = e.hold("elicitation/create", ["a", "b", "c"]);
    e.ended("a");
    e.ended("x");
    e.ended("c");
    await expect(held).resolves.toBe("b");
  });

  it("gives every question held on the same calls to the one left", async () => {
    const e = new Elimination<string>(silentLogger);
    const first = e.hold("roots/list", ["a", "b", "c"]);
    const second = e.hold("elicitation/create", ["a", "b", "c"]);
    e.ended("a");
    e.ended("c");
    await expect(Promise.all([first, second])).resolves.toEqual(["b", "b"]);
  });

  it("gives up everything held when told to (a call left running), and when the hold runs out", async () => {
    const e = new Elimination<string>(silentLogger);
    const first = e.hold("elicitation/create", ["a", "b"]);
    e.giveUp();
    await expect(first).resolves.toBeUndefined();
    vi.useFakeTimers();
    const timed = new Elimination<string>(silentLogger, 1_000);
    const second = timed.hold("elicitation/create", ["a", "b"]);
    vi.advanceTimersByTime(1_000);
    await expect(second).resolves.toBeUndefined();
  });
});
