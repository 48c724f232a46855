import { parse as parseShell } from "shell-quote";
import type { UpstreamTransport } from "./overrides.js";

export type UpstreamSpecResult = { ok: true; transport: UpstreamTransport } | { ok: false; problem: string };

const STDIO_PREFIX = "stdio:";

/**
 * `stdio:<command line>` or an http(s) URL. The command line is split like a shell would
 * (quotes, `$VAR` from `env`) but never run by one, so operators (`|`, `>`, `&&`, globs)
 * would silently mean something else: they are refused.
 */
export function parseUpstreamSpec(spec: string, source: string, env: NodeJS.ProcessEnv): UpstreamSpecResult {
  if (spec.startsWith(STDIO_PREFIX)) return parseStdio(spec.slice(STDIO_PREFIX.length), source, env);
  if (/^https?:\/\//i.test(spec)) {
    if (!URL.canParse(spec)) return { ok: false, problem: `${source}: not a valid URL: "${spec}"` };
    return { ok: true, transport: { http: { url: spec } } };
  }
  return { ok: false, problem: `${source}: expected "stdio:<command line>" or an http(s) URL, got "${spec}"` };
}

function parseStdio(commandLine: string, source: string, env: NodeJS.ProcessEnv): UpstreamSpecResult {
  const words: string[] = [];
  for (const entry of parseShell(commandLine, (name) => env[name] ?? "")) {
    if (typeof entry === "string") {
      words.push(entry);
      continue;
    }
    const what = "op" in entry ? (entry.op === "glob" ? `the glob "${entry.pattern}"` : `the operator "${entry.op}"`) : "a comment";
    return { ok: false, problem: `${source}: the command line has ${what}; it is run without a shell, give a plain command` };
  }
  const [command, ...args] = words;
  if (command === undefined || command === "") return { ok: false, problem: `${source}: "stdio:" needs a command line` };
  return { ok: true, transport: { stdio: { command, args } } };
}
