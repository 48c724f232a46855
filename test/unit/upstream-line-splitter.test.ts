import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/upstream/stdio/line-splitter.js";

function split(chunks: Array<string | Buffer>, maxLineBytes = 1024): { lines: string[]; overlong: number } {
  const lines: string[] = [];
  let overlong = 0;
  const splitter = new LineSplitter(
    maxLineBytes,
    (l) => lines.push(l),
    () => overlong++,
  );
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.end();
  return { lines, overlong };
}

describe("LineSplitter", () => {
  it("splits on newlines across chunk boundaries and ignores empty lines", () => {
    expect(split(["a", "b\nc\n\nd", "e\n"]).lines).toEqual(["ab", "c", "de"]);
  });

  it("strips a trailing carriage return", () => {
    expect(split(["one\r\ntwo\r\n"]).lines).toEqual(["one", "two"]);
  });

  it("keeps a multi-byte character that straddles two chunks", () => {
    const bytes = Buffer.from("héllo\n");
    expect(split([bytes.subarray(0, 2), bytes.subarray(2)]).lines).toEqual(["héllo"]);
  });

  it("accepts a line of exactly maxLineBytes", () => {
    expect(split([`${"x".repeat(8)}\n`], 8).lines).toEqual(["x".repeat(8)]);
  });

  it("drops a longer line once, skips the rest of it, and goes on with the next", () => {
    const { lines, overlong } = split(["before\n", "y".repeat(6), "y".repeat(6), "y".repeat(6), "\nafter\n"], 10);
    expect(lines).toEqual(["before", "after"]);
    expect(overlong).toBe(1);
  });

  it("delivers a last line without its newline at the end of the stream", () => {
    expect(split(["a\nb"]).lines).toEqual(["a", "b"]);
  });
});
