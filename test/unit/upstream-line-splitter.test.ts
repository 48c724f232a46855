import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter, type OverlongLine } from "../../src/upstream/stdio/line-splitter.js";
import { overlongAnswerId } from "../../src/upstream/refused-answer.js";

function split(chunks: Array<string | Buffer>, maxLineBytes = 1024): { lines: string[]; overlong: number; ends: OverlongLine[] } {
  const lines: string[] = [];
  const ends: OverlongLine[] = [];
  const splitter = new LineSplitter(
    maxLineBytes,
    (l) => lines.push(l),
    (line) => ends.push(line),
  );
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.end();
  return { lines, overlong: ends.length, ends };
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

  it("keeps only the ends of an overlong line, enough to tell whose answer it was", () => {
    const line = `{"result":{"content":[{"type":"text","text":"${"z".repeat(5000)}"}]},"jsonrpc":"2.0","id":42}\n`;
    const { ends } = split([line.slice(0, 1000), line.slice(1000, 3000), line.slice(3000)], 1024);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.head.length + ends[0]!.tail.length).toBeLessThanOrEqual(512);
    expect(overlongAnswerId(ends[0]!.head, ends[0]!.tail)).toBe(42);
    expect(overlongAnswerId('{"jsonrpc":"2.0","id":"a-1","result":{"x":"', "")).toBe("a-1");
    // A request of the upstream's own (a question) fails nothing of ours, whatever its id.
    expect(overlongAnswerId('{"method":"elicitation/create","params":{"m":"', '"},"jsonrpc":"2.0","id":0}')).toBeUndefined();
  });

  it("delivers a last line without its newline at the end of the stream", () => {
    expect(split(["a\nb"]).lines).toEqual(["a", "b"]);
  });

  it("splits the same lines however the stream is cut into chunks", () => {
    const line = fc.oneof(
      fc.string({ maxLength: 14 }),
      fc.constantFrom("é€😀", "a\r", "\r", "x".repeat(12), "y".repeat(10), "y".repeat(11), `${"é".repeat(5)}\r`),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""));
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const ends = [...at, bytes.length];
        const { lines: got, overlong } = split(
          [0, ...at].map((from, i) => bytes.subarray(from, ends[i])),
          10,
        );
        const fits = lines.filter((l) => Buffer.byteLength(l) <= 10);
        expect(got).toEqual(fits.map((l) => l.replace(/\r$/, "")).filter((l) => l.length > 0));
        expect(overlong).toBe(lines.length - fits.length);
      }),
      { numRuns: 300 },
    );
  });
});
