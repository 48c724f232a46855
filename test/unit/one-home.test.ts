import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/sources.js";

/** Code, without its comments: a comment may cite a version or a code, the code must not spell one out. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
// The demo server is an upstream of its own, with its own choices.
const files = sourceFiles().filter((f) => !f.path.startsWith("demo/"));
const writing = (pattern: RegExp, home: string[]) => files.filter((f) => !home.includes(f.path) && pattern.test(code(f.text))).map((f) => f.path);

describe("one home per concept", () => {
  it("names MCP protocol versions only in jsonrpc/versions.ts", () => {
    expect(writing(/["'`]20\d\d-\d\d-\d\d["'`]/, ["jsonrpc/versions.ts"])).toEqual([]);
  });

  it("names bus channels only in store/channels.ts", () => {
    expect(writing(/["'`](task|owner|principal|sessions):/, ["store/channels.ts"])).toEqual([]);
  });

  it("writes JSON-RPC error codes as numbers only in jsonrpc/codes.ts and the errors table", () => {
    expect(writing(/code:\s*-32\d{3}|case\s+-32\d{3}|=\s*-32\d{3}\s*;/, ["jsonrpc/codes.ts", "wire/errors.ts"])).toEqual([]);
  });
});
