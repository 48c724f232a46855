import { describe, expect, it } from "vitest";
import { TextKeyedCache } from "../../src/util/text-keyed-cache.js";

describe("TextKeyedCache", () => {
  it("computes a text's value once, keeps no text longer than its bound, and never holds more than its entries", () => {
    const cache = new TextKeyedCache<object>(2, 5);
    let made = 0;
    const make = () => ({ n: ++made });
    const a = cache.get("a", make);
    expect(cache.get("a", make)).toBe(a);
    expect(made).toBe(1);
    // Too long to keep: made again each time.
    expect(cache.get("longer", make)).not.toBe(cache.get("longer", make));
    expect(made).toBe(3);
    cache.get("b", make);
    // Full: the third text drops what was kept, "a" included.
    cache.get("c", make);
    expect(cache.get("a", make)).not.toBe(a);
    expect(made).toBe(6);
  });
});
