import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { eachChunk } from "../../src/upstream/http/each-chunk.js";

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");

describe("eachChunk", () => {
  it("hands every chunk of a Node stream over, in order, and resolves at its end", async () => {
    const seen: Uint8Array[] = [];
    await eachChunk(Readable.from([Buffer.from("a"), Buffer.from("b"), Buffer.from("c")]), (chunk) => seen.push(chunk));
    expect(text(seen)).toBe("abc");
  });

  it("reads a web stream too", async () => {
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("x"));
        controller.enqueue(new TextEncoder().encode("y"));
        controller.close();
      },
    });
    const seen: Uint8Array[] = [];
    await eachChunk(web, (chunk) => seen.push(chunk));
    expect(text(seen)).toBe("xy");
  });

  it("rejects with the stream's error", async () => {
    const body = new PassThrough();
    const reading = eachChunk(body, () => undefined);
    body.write("partial");
    body.destroy(new Error("socket hang up"));
    await expect(reading).rejects.toThrow("socket hang up");
  });

  it("rejects when the stream closes before its end without an error, as for await says it", async () => {
    const body = new PassThrough();
    const reading = eachChunk(body, () => undefined);
    body.write("partial");
    body.destroy();
    await expect(reading).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    await expect(eachChunk(body, () => undefined)).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
  });

  it("rejects with what the reader threw, and cancels the body", async () => {
    const body = new PassThrough();
    const reading = eachChunk(body, () => {
      throw new Error("too long");
    });
    body.write("x");
    await expect(reading).rejects.toThrow("too long");
    expect(body.destroyed).toBe(true);
  });

  it("resolves at once for a body already read to its end", async () => {
    const body = Readable.from([Buffer.from("done")]);
    await eachChunk(body, () => undefined);
    expect(body.readableEnded).toBe(true);
    await expect(eachChunk(body, () => undefined)).resolves.toBeUndefined();
  });
});
