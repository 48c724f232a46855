import { describe, expect, it } from "vitest";
import { InFlightMap } from "../../src/util/in-flight-map.js";
import { RequestAbort } from "../../src/upstream/http/request-abort.js";

describe("InFlightMap", () => {
  it("keeps what a Map keeps across the copies it makes of itself", () => {
    const map = new InFlightMap<string | number, number>();
    const mirror = new Map<string | number, number>();
    // Ten in flight at a time, as under load, across several copies (one per 1,024 sets).
    for (let i = 0; i < 5000; i++) {
      const key = i % 3 === 0 ? i : `k${i}`;
      map.set(key, i);
      mirror.set(key, i);
      if (i >= 10) {
        const old = (i - 10) % 3 === 0 ? i - 10 : `k${i - 10}`;
        expect(map.delete(old)).toBe(true);
        mirror.delete(old);
      }
    }
    expect(map.size).toBe(mirror.size);
    expect([...map.entries()]).toEqual([...mirror.entries()]);
    expect(map.get(4999)).toBeUndefined();
    expect(map.get("k4999")).toBe(4999);
    expect([map.has(4995), map.has(4989), map.has("k4991"), map.has("k4988")]).toEqual([true, false, true, false]);
    // A number key and its string are two keys, as in a Map.
    map.set(7, 1).set("7", 2);
    expect([map.get(7), map.get("7")]).toEqual([1, 2]);
    map.clear();
    expect(map.size).toBe(0);
  });
});

describe("RequestAbort", () => {
  it("aborts once, tells its listener, and makes a signal that agrees before and after", () => {
    const abort = new RequestAbort();
    const early = abort.signal;
    let heard = 0;
    abort.listen(() => heard++);
    const reason = new Error("released");
    abort.abort(reason);
    abort.abort(new Error("again"));
    expect([abort.aborted, abort.reason, heard]).toEqual([true, reason, 1]);
    expect([early.aborted, early.reason]).toEqual([true, reason]);
    const late = new RequestAbort();
    late.abort();
    expect((late.reason as DOMException).name).toBe("AbortError");
    expect([late.signal.aborted, late.signal.reason]).toEqual([true, late.reason]);
    const gone = new RequestAbort();
    gone.listen(() => heard++);
    gone.listen(undefined);
    gone.abort();
    expect(heard).toBe(1);
  });
});
