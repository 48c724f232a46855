import { readFileSync } from "node:fs";

/** The version of the package this file came from: its package.json sits beside src/ and dist/, two folders up. */
export function packageVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : "unknown";
  } catch {
    return "unknown";
  }
}
