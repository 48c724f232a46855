import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseDocument } from "yaml";

export type RawConfig = Record<string, unknown>;
export type FileResult = { ok: true; raw: RawConfig } | { ok: false; problems: string[] };

/**
 * Reads a YAML config file (relative paths from `cwd`) into plain data; the schema checks it
 * later. Every syntax error is reported with its line and column, prefixed by the file name
 * as it was given, so the message points where the operator looks.
 */
export function readConfigFile(file: string, cwd: string): FileResult {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), "utf8");
  } catch (err) {
    return { ok: false, problems: [`${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`] };
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((e) => `${file}:${position(e.linePos)} ${firstLine(e.message)}`) };
  }
  const data: unknown = doc.toJS();
  // An empty file (or one holding only comments) is an empty config, not an error.
  if (data === null || data === undefined) return { ok: true, raw: {} };
  if (typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, problems: [`${file}: expected a mapping of keys at the top level`] };
  }
  return { ok: true, raw: data as RawConfig };
}

function position(linePos: [{ line: number; col: number }, ...unknown[]] | undefined): string {
  return linePos ? `${linePos[0].line}:${linePos[0].col}:` : "";
}

/** The library's message repeats the position and the line with a caret; the prefix already says where. */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}
