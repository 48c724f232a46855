import { describe, expect, it, vi } from "vitest";
import { CallReply, parseAccept } from "../../src/wire/reply.js";

const done = { jsonrpc: "2.0" as const, id: 1, result: { ok: true } };
const progress = { jsonrpc: "2.0" as const, method: "notifications/progress", params: { progressToken: 1, progress: 1 } };

describe("the reply to a POSTed request", () => {
  it("reads Accept headers, wildcards included", () => {
    expect(parseAccept("application/json, text/event-stream")).toEqual({ json: true, sse: true });
    expect(parseAccept("*/*")).toEqual({ json: true, sse: true });
    expect(parseAccept("text/event-stream;q=0.9")).toEqual({ json: false, sse: true });
    expect(parseAccept("text/html")).toEqual({ json: false, sse: false });
    expect(parseAccept(undefined)).toEqual({ json: false, sse: false });
  });

  it("answers a header read before from what it kept, past its bound and for a header too long to keep", () => {
    const first = parseAccept("application/json, text/event-stream");
    expect(parseAccept("application/json, text/event-stream")).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // More distinct headers than are kept: each still read right, the first read again after.
    for (let i = 0; i < 200; i++) expect(parseAccept(`text/event-stream;q=0.${i % 10}, x/${i}`)).toEqual({ json: false, sse: true });
    expect(parseAccept("application/json, text/event-stream")).toEqual({ json: true, sse: true });
    const long = `${"x/y, ".repeat(100)}application/json`;
    expect(parseAccept(long)).toEqual({ json: true, sse: false });
    expect(parseAccept(long)).not.toBe(parseAccept(long));
  });

  it("stays one JSON body when nothing had to be streamed", async () => {
    const res = await new CallReply({ json: true, sse: true }, 60_000).respond(Promise.resolve(done));
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual(done);
  });

  it("turns into an SSE stream at the first message sent before the response", async () => {
    const reply = new CallReply({ json: true, sse: true }, 60_000);
    let finish!: () => void;
    const work = new Promise<typeof done>((r) => (finish = () => r(done)));
    const pending = reply.respond(work);
    expect(reply.send(progress)).toBe(true);
    const res = await pending;
    finish();
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const frames = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(frames).toEqual([progress, done]);
  });

  it("cannot stream to a client that accepts only JSON", () => {
    expect(new CallReply({ json: true, sse: false }, 60_000).send(progress)).toBe(false);
  });

  it("answers a call still running after keepAliveMs on SSE, with keep-alive comments before the result", async () => {
    const reply = new CallReply({ json: true, sse: true }, 20);
    let finish!: () => void;
    const res = await reply.respond(new Promise<typeof done>((r) => (finish = () => r(done))));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": keep-alive")) text += decoder.decode((await reader.read()).value);
    finish();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
    const frames = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(frames).toEqual([done]);
  });

  it("stays one JSON body for a long call when keep-alives are off (0) or the client takes only JSON", async () => {
    // A fake clock: the call ends only after far more than keepAliveMs, whatever the machine's load.
    vi.useFakeTimers();
    try {
      for (const [accepts, keepAliveMs] of [
        [{ json: true, sse: true }, 0],
        [{ json: true, sse: false }, 5],
      ] as const) {
        let finish!: () => void;
        const replied = new CallReply(accepts, keepAliveMs).respond(new Promise<typeof done>((r) => (finish = () => r(done))));
        await vi.advanceTimersByTimeAsync(1_000);
        finish();
        const res = await replied;
        expect(res.headers.get("content-type")).toContain("application/json");
        expect(await res.json()).toEqual(done);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers with the stream when it was started before the call was handed over", async () => {
    const reply = new CallReply({ json: true, sse: true }, 60_000);
    reply.startStream();
    const res = await reply.respond(Promise.resolve(done));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(await res.text()).toContain('"ok":true');
  });
});
