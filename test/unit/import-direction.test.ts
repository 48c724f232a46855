import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const files = sources(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, "utf8") }));
const importsOf = (text: string) => [...text.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]!);
/** The src-relative paths a file imports (relative imports only). */
const localImports = (f: { path: string; text: string }) =>
  importsOf(f.text)
    .filter((i) => i.startsWith("."))
    .map((i) => relative(SRC, join(SRC, dirname(f.path), i)));

describe("imports point one way", () => {
  it("keeps ioredis inside store/redis/", () => {
    const offenders = files.filter((f) => importsOf(f.text).includes("ioredis") && !f.path.startsWith("store/redis/"));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it("keeps tasks/, store/ and upstream/ free of http/ and dialects/", () => {
    const offenders = files.filter((f) => /^(tasks|store|upstream)\//.test(f.path) && localImports(f).some((i) => /^(http|dialects)\//.test(i)));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it("reads process.env only in config/ and the composition entry points", () => {
    // The stdio connector hands taskgate's own environment to the child it spawns; that is not configuration.
    const allowed = new Set(["cli.ts", "upstream/stdio/process.ts"]);
    const offenders = files.filter((f) => /process\.env\b/.test(f.text) && !f.path.startsWith("config/") && !allowed.has(f.path));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });
});
