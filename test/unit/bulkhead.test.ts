import { describe, expect, it } from "vitest";
import { Bulkhead, LeftQueueError, QueueTimeoutError } from "../../src/upstream/mux/bulkhead.js";

describe("the bulkhead in front of an upstream", () => {
  it("lets calls in up to its limit, then queues the rest first in, first out", async () => {
    const bulkhead = new Bulkhead("up", 2, 60_000);
    const [a, b] = [bulkhead.enter(), bulkhead.enter()];
    await Promise.all([a.ready, b.ready]);
    const started: string[] = [];
    const c = bulkhead.enter();
    const d = bulkhead.enter();
    void c.ready.then(() => started.push("c"));
    void d.ready.then(() => started.push("d"));
    expect(bulkhead.queued).toBe(2);
    a.leave();
    await c.ready;
    expect(started).toEqual(["c"]);
    b.leave();
    await d.ready;
    expect(started).toEqual(["c", "d"]);
    expect(bulkhead.inFlight).toBe(2);
    c.leave();
    d.leave();
    expect(bulkhead.inFlight).toBe(0);
  });

  it("tells each queued call how many are ahead, as the queue moves", async () => {
    const bulkhead = new Bulkhead("up", 1, 60_000);
    const running = bulkhead.enter();
    const seen: Record<string, number[]> = { x: [], y: [], z: [] };
    const [x, y, z] = ["x", "y", "z"].map((name) => bulkhead.enter((ahead) => seen[name]!.push(ahead)));
    expect(y!.withdraw()).toBe(true);
    await expect(y!.ready).rejects.toBeInstanceOf(LeftQueueError);
    running.leave();
    await x!.ready;
    expect(seen).toEqual({ x: [0], y: [1], z: [2, 1, 0] });
    expect(x!.withdraw()).toBe(false);
    x!.leave();
    await z!.ready;
    z!.leave();
    expect(bulkhead.inFlight).toBe(0);
  });

  it("gives up on a call that waited queueTimeoutMs, and says why", async () => {
    const waits: number[] = [];
    const bulkhead = new Bulkhead("slow-one", 1, 20, { waited: (s) => waits.push(s) });
    const running = bulkhead.enter();
    const late = bulkhead.enter();
    await expect(late.ready).rejects.toThrow(QueueTimeoutError);
    await expect(late.ready).rejects.toThrow("upstream 'slow-one' is busy: 1 calls were in flight and this one waited 20 ms (queueTimeoutMs)");
    expect(bulkhead.queued).toBe(0);
    running.leave();
    expect(bulkhead.inFlight).toBe(0);
    expect(waits).toHaveLength(2);
  });

  it("times out every queued call in turn, oldest first, and lets in a later one once a slot frees", async () => {
    const bulkhead = new Bulkhead("up", 1, 30);
    const running = bulkhead.enter();
    const [first, second] = [bulkhead.enter(), bulkhead.enter()];
    const order: string[] = [];
    const settled = [first, second].map((t, i) => t.ready.catch(() => order.push(i === 0 ? "first" : "second")));
    await Promise.all(settled);
    expect(order).toEqual(["first", "second"]);
    expect(bulkhead.queued).toBe(0);
    const later = bulkhead.enter();
    expect(later.started).toBe(false);
    running.leave();
    await later.ready;
    expect(later.started).toBe(true);
    later.leave();
    expect(bulkhead.inFlight).toBe(0);
  });
});
