import { describe, expect, it } from "vitest";
import { CallReply, parseAccept } from "../../src/http/reply.js";

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
    const frames = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    expect(frames).toEqual([progress, done]);
  });

  it("cannot stream to a client that accepts only JSON", () => {
    expect(new CallReply({ json: true, sse: false }, 60_000).send(progress)).toBe(false);
  });
});
