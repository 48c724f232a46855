import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC, sourceFiles } from "../helpers/sources.js";
import { MODULE_MAP, moduleMapTable } from "./module-map.js";

const files = sourceFiles();

/** The module a src-relative path belongs to: its top folder, or the file itself at the top. */
const moduleOf = (path: string) => (path.includes("/") ? path.split("/")[0]! : path.replace(/\.js$/, ".ts"));

/**
 * Run-time imports and re-exports of a file: `import type` and `export type` are erased, so free;
 * a bare `import "x"` and a dynamic `import("x")` load their module and count.
 */
function runtimeImports(text: string): string[] {
  const found = text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"([^"]+)";/gms);
  const bare = text.matchAll(/^import\s+"([^"]+)";/gm);
  const dynamic = text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g);
  return [...[...found].filter((m) => m[1] === undefined).map((m) => m[2]!), ...[...bare, ...dynamic].map((m) => m[1]!)];
}

/** Every arrow between two modules: who imports whom, and from which file. */
const arrows = files.flatMap((f) =>
  runtimeImports(f.text)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => ({ file: f.path, from: moduleOf(f.path), to: moduleOf(normalize(join(dirname(f.path), spec))) }))
    .filter((a) => a.from !== a.to),
);

describe("the module map", () => {
  it("names every folder and top-level file of src/", () => {
    const present = [...new Set(files.map((f) => moduleOf(f.path)))].sort();
    expect(MODULE_MAP.map((m) => m.name).sort()).toEqual(present);
  });

  it("is the table docs/contributing/architecture.md holds", () => {
    expect(readFileSync(join(SRC, "../docs/contributing/architecture.md"), "utf8")).toContain(moduleMapTable());
  });
});

describe("imports point one way", () => {
  for (const entry of MODULE_MAP) {
    it(`${entry.name} imports only what the map allows`, () => {
      const allowed = new Set([...entry.mayImport, ...(entry.exceptions ?? []).map((e) => e.to)]);
      const offenders = arrows.filter((a) => a.from === entry.name && !allowed.has(a.to)).map((a) => `${a.file} → ${a.to}`);
      expect(offenders).toEqual([]);
    });
  }

  it("lists no exception the tree no longer has (they only shrink)", () => {
    const stale = MODULE_MAP.flatMap((m) =>
      (m.exceptions ?? []).filter((e) => !arrows.some((a) => a.from === m.name && a.to === e.to)).map((e) => `${m.name} → ${e.to}`),
    );
    expect(stale).toEqual([]);
  });

  it("keeps ioredis inside store/redis/", () => {
    const offenders = files.filter((f) => runtimeImports(f.text).includes("ioredis") && !f.path.startsWith("store/redis/"));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it("keeps the engine off the store's implementations: tasks/ sees the contract only", () => {
    const direct = files.filter((f) => f.path.startsWith("tasks/") && runtimeImports(f.text).some((s) => /store\/(redis|memory)\//.test(s)));
    expect(direct.map((f) => f.path)).toEqual([]);
  });

  it("keeps the engine off transports: of upstream/, tasks/ imports only the caller contract", () => {
    const direct = files.filter(
      (f) => f.path.startsWith("tasks/") && runtimeImports(f.text).some((s) => /upstream\//.test(s) && !s.endsWith("upstream/caller.js")),
    );
    expect(direct.map((f) => f.path)).toEqual([]);
  });

  it("reads process.env only in config/ and the composition entry points", () => {
    // The stdio connector picks what of taskgate's environment the child it spawns gets (child-env.ts); that is not configuration.
    const allowed = new Set(["cli.ts", "upstream/stdio/process.ts"]);
    const offenders = files.filter((f) => /process\.env\b/.test(f.text) && !f.path.startsWith("config/") && !allowed.has(f.path));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });
});
