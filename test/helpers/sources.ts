import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export const SRC = join(import.meta.dirname, "../../src");

/** Every TypeScript file under src/, by its src-relative path, with its text. */
export function sourceFiles(dir = SRC): Array<{ path: string; text: string }> {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [{ path: relative(SRC, path), text: readFileSync(path, "utf8") }] : [];
  });
}
