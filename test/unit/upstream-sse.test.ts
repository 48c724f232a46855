import { describe, expect, it } from "vitest";
import { readSse } from "../../src/upstream/http/sse.js";

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[], maxEventChars = 1024) {
  const data: string[] = [];
  const ids: string[] = [];
  const retries: number[] = [];
  await readSse(body(chunks), maxEventChars, { onData: (d) => data.push(d), onEventId: (i) => ids.push(i), onRetry: (ms) => retries.push(ms) });
  return { data, ids, retries };
}

describe("readSse", () => {
  it("yields each event's data, across chunk boundaries", async () => {
    const { data } = await read(['data: {"a":', '1}\n\ndata: {"b":2}\n', "\n"]);
    expect(data).toEqual(['{"a":1}', '{"b":2}']);
  });

  it("skips the empty priming event but keeps its id and the retry hint", async () => {
    const { data, ids, retries } = await read(["id: e-0\nretry: 50\ndata:\n\n", "id: e-1\ndata: {}\n\n"]);
    expect(data).toEqual(["{}"]);
    expect(ids).toEqual(["e-0", "e-1"]);
    expect(retries).toEqual([50]);
  });

  it("ignores events of other types", async () => {
    const { data } = await read(["event: ping\ndata: x\n\ndata: y\n\n"]);
    expect(data).toEqual(["y"]);
  });

  it("throws instead of buffering an event larger than the limit", async () => {
    await expect(read([`data: ${"z".repeat(5000)}`], 1000)).rejects.toThrow(/longer than 1000 characters/);
  });
});
