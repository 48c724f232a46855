import { afterEach, describe, expect, it, vi } from "vitest";
import { Deadlines } from "../../src/wire/deadlines.js";

/** Resolves with what fired, once `count` have; rejects past `ms`, so a deadline that never fires fails the test. */
function firings(count: number, ms = 5_000): { fired: string[]; all: Promise<string[]>; fire: (name: string) => () => void } {
  const fired: string[] = [];
  let resolve!: (names: string[]) => void;
  const all = new Promise<string[]>((res, reject) => {
    resolve = res;
    setTimeout(() => reject(new Error(`only ${fired.length} of ${count} fired: ${fired.join(", ")}`)), ms).unref();
  });
  const fire = (name: string) => () => {
    fired.push(name);
    if (fired.length === count) resolve([...fired]);
  };
  return { fired, all, fire };
}

describe("deadlines of one length on one timer", () => {
  afterEach(() => vi.restoreAllMocks());

  it("fires each once, oldest first, after its length; one cleared never fires", async () => {
    const deadlines = new Deadlines(30);
    const { all, fire } = firings(3);
    const started = performance.now();
    const first = deadlines.set(fire("first"));
    const cleared = deadlines.set(fire("cleared"));
    deadlines.set(fire("second"));
    deadlines.clear(cleared);
    deadlines.clear(cleared);
    // Set after the others: due later, fired after them.
    await new Promise((r) => setTimeout(r, 5));
    deadlines.set(fire("third"));
    expect(await all).toEqual(["first", "second", "third"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(deadlines.size).toBe(0);
    // Clearing one that fired changes nothing.
    deadlines.clear(first);
    expect(deadlines.size).toBe(0);
  });

  it("keeps one timer however many wait, and fires again after the list emptied and filled", async () => {
    const deadlines = new Deadlines(20);
    const { all, fire } = firings(100);
    const timers = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < 100; i++) deadlines.set(fire(String(i)));
    // Taken out as they end, as replies do: none fires, and no timer is set or cleared for them.
    let clearedFired = 0;
    const quick = Array.from({ length: 1_000 }, () => deadlines.set(() => clearedFired++));
    for (const d of quick) deadlines.clear(d);
    expect(timers).toHaveBeenCalledTimes(1);
    expect(await all).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
    timers.mockRestore();

    // Due after every one set before it: by now a cleared one that still fired would have.
    const again = firings(1);
    deadlines.set(again.fire("later"));
    expect(await again.all).toEqual(["later"]);
    expect(clearedFired).toBe(0);
  });

  it("fires the rest when one throws", async () => {
    const deadlines = new Deadlines(10);
    const { all, fire } = firings(1);
    deadlines.set(() => {
      throw new Error("its own failure");
    });
    deadlines.set(fire("after"));
    expect(await all).toEqual(["after"]);
  });
});
