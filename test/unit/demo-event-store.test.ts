import { describe, expect, it } from "vitest";
import { BoundedEventStore } from "../../src/demo/event-store.js";

const message = (n: number) => ({ jsonrpc: "2.0" as const, method: "notifications/progress", params: { progress: n, progressToken: "p" } });

async function replay(store: BoundedEventStore, after: string): Promise<{ streamId: string; ids: string[]; progress: unknown[] }> {
  const ids: string[] = [];
  const progress: unknown[] = [];
  const streamId = await store.replayEventsAfter(after, {
    send: async (id, m) => {
      ids.push(id);
      progress.push((m as { params?: { progress?: unknown } }).params?.progress);
    },
  });
  return { streamId, ids, progress };
}

describe("the demo's event store (--event-store)", () => {
  it("replays one stream's events after an id, in the order they were stored, and names the stream", async () => {
    const store = new BoundedEventStore();
    const priming = await store.storeEvent("s1", {} as never);
    const ids: string[] = [];
    for (let n = 1; n <= 12; n++) {
      ids.push(await store.storeEvent("s1", message(n)));
      await store.storeEvent("s2", message(100 + n));
    }
    expect(await store.getStreamIdForEventId(priming)).toBe("s1");
    const all = await replay(store, priming);
    expect(all).toEqual({ streamId: "s1", ids, progress: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] });
    expect((await replay(store, ids[9]!)).progress).toEqual([11, 12]);
  });

  it("keeps at most its bound, the oldest going first, and refuses an id it no longer holds", async () => {
    const store = new BoundedEventStore(3);
    const first = await store.storeEvent("s", message(1));
    const kept = [await store.storeEvent("s", message(2)), await store.storeEvent("s", message(3)), await store.storeEvent("s", message(4))];
    expect(await store.getStreamIdForEventId(first)).toBeUndefined();
    await expect(replay(store, first)).rejects.toThrow(/not held/);
    expect((await replay(store, kept[0]!)).progress).toEqual([3, 4]);
  });
});
