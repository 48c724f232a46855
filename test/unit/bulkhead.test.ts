import { describe, expect, it, vi } from "vitest";
import { QueueWait } from "../../src/upstream/caller.js";
import { Bulkhead, LeftQueueError, QUEUE_TICK_MS, QueueTimeoutError } from "../../src/upstream/mux/bulkhead.js";

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

  it("tells each queued call how many are ahead, at once and then at the next tick after the queue moved", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "performance"] });
    try {
      const bulkhead = new Bulkhead("up", 1, 60_000);
      const running = bulkhead.enter();
      const seen: Record<string, number[]> = { x: [], y: [], z: [] };
      const [x, y, z] = ["x", "y", "z"].map((name) => bulkhead.enter((ahead) => seen[name]!.push(ahead)));
      expect(y!.withdraw()).toBe(true);
      await expect(y!.ready).rejects.toBeInstanceOf(LeftQueueError);
      running.leave();
      await x!.ready;
      expect(seen).toEqual({ x: [0], y: [1], z: [2] });
      vi.advanceTimersByTime(QUEUE_TICK_MS);
      expect(seen).toEqual({ x: [0], y: [1], z: [2, 0] });
      expect(x!.withdraw()).toBe(false);
      x!.leave();
      await z!.ready;
      z!.leave();
      expect(bulkhead.inFlight).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("tells a long queue's places only moves worth a status write: every count under 10, else a fifth or more", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "performance"] });
    try {
      const bulkhead = new Bulkhead("up", 1, 3_600_000);
      const tickets = [bulkhead.enter()];
      const told: number[] = [];
      let others = 0;
      for (let i = 0; i < 500; i++) tickets.push(bulkhead.enter(() => others++));
      const last = bulkhead.enter((ahead) => told.push(ahead));
      tickets.push(last);
      // Every slot's turn: the running call ends, the next one starts, the queue ticks.
      for (let i = 0; i < 501; i++) {
        tickets.shift()?.leave();
        vi.advanceTimersByTime(QUEUE_TICK_MS);
      }
      expect(told[0]).toBe(500);
      expect(told.at(-1)).toBe(0);
      // 501 moves, told about 2·log(500) + 10 times, not 500.
      expect(told.length).toBeLessThan(40);
      expect(others).toBeLessThan(500 * 40);
      for (let i = 1; i < told.length; i++) expect(told[i]!).toBeLessThan(told[i - 1]!);
      expect(last.started).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("takes turns by principal: a batch of one principal delays another's single call by at most one turn", async () => {
    const bulkhead = new Bulkhead("up", 1, 60_000);
    const running = bulkhead.enter({ principal: "a" });
    const order: string[] = [];
    const tickets = [];
    for (let i = 0; i < 5; i++) tickets.push([`a${i}`, bulkhead.enter({ principal: "a" })] as const);
    const aheadOfB: number[] = [];
    tickets.push(["b0", bulkhead.enter({ principal: "b", onAhead: (n) => aheadOfB.push(n) })] as const);
    tickets.push(["b1", bulkhead.enter({ principal: "b" })] as const);
    tickets.push(["c0", bulkhead.enter({ principal: "c" })] as const);
    // b's first call waits behind a's next one only.
    expect(aheadOfB).toEqual([1]);
    running.leave();
    // One slot: each turn, the one call let in runs and ends.
    for (let turn = 0; turn < tickets.length; turn++) {
      const started = tickets.filter(([name, t]) => t.started && !order.includes(name));
      expect(started).toHaveLength(1);
      const [name, t] = started[0]!;
      order.push(name);
      await t.ready;
      t.leave();
    }
    expect(order).toEqual(["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"]);
    expect(bulkhead.inFlight).toBe(0);
    expect(bulkhead.waitingPrincipals).toBe(0);
  });

  it("lets a task wait past queueTimeoutMs until shortly before its TTL, and a call that became a task too", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "performance"] });
    try {
      const bulkhead = new Bulkhead("up", 1, 1_000);
      const running = bulkhead.enter();
      const task = new QueueWait();
      task.becameTask(30_000, 30_000);
      const plainNow = new QueueWait();
      const t = bulkhead.enter({ wait: task });
      const later = bulkhead.enter({ wait: plainNow });
      const plain = bulkhead.enter();
      const outcomes: string[] = [];
      t.ready.catch((err: Error) => outcomes.push(`task: ${err.message}`));
      plain.ready.catch((err: Error) => outcomes.push(`plain: ${err.name}`));
      later.ready.catch((err: Error) => outcomes.push(`later: ${err.name}`));
      vi.advanceTimersByTime(500);
      plainNow.becameTask(30_000, 29_500);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(outcomes).toEqual(["plain: QueueTimeoutError"]);
      // The margin: a tenth of the TTL, so the failure is still there to read.
      await vi.advanceTimersByTimeAsync(30_000 - 3_000 - 1_500 - 1_000);
      expect(outcomes).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(outcomes.slice(1).sort()).toEqual([
        "later: QueueTtlError",
        expect.stringMatching(
          /^task: upstream 'up' is busy: 1 calls were in flight the whole time this task waited for a slot \(2\d s\); it stopped waiting before its TTL \(30000 ms\) ran out$/,
        ),
      ]);
      expect(bulkhead.queued).toBe(0);
      running.leave();
      expect(bulkhead.inFlight).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("counts a call that moved from another queue from when it first waited, once", () => {
    const waits: number[] = [];
    const bulkhead = new Bulkhead("up", 1, 60_000, { waited: (s) => waits.push(s) });
    const moved = bulkhead.enter({ since: performance.now() - 2_000 });
    expect(moved.started).toBe(true);
    expect(waits[0]).toBeGreaterThanOrEqual(2);
    const queued = bulkhead.enter({ since: performance.now() - 3_000 });
    expect(queued.since).toBeLessThan(performance.now() - 2_999);
    expect(queued.withdraw(true)).toBe(true);
    // Left for another queue: counted there, not here.
    expect(waits).toHaveLength(1);
    moved.leave();
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
