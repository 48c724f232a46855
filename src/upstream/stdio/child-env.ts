import type { StdioUpstreamConfig } from "../../config/schema.js";

/**
 * What a stdio child's environment holds: chosen, not inherited. taskgate's own environment carries
 * its secrets (TASKGATE_ADMIN_TOKEN, the Redis URL, other upstreams' `${VAR}` credentials); a child
 * gets only what it needs to run plus what the configuration names, as the MCP SDK's stdio client
 * does (`getDefaultEnvironment()` in @modelcontextprotocol/sdk/client/stdio).
 */

/** The SDK's list (sudo's default inheritance on POSIX), and what else a program needs to behave as under taskgate. */
const POSIX = [
  ...["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"],
  // The locale: without it a child may write and read its JSON-RPC lines in ASCII rather than UTF-8.
  ...["LANG", "LC_ALL", "LC_CTYPE"],
  // Local time as taskgate sees it, so times a server prints agree with taskgate's logs.
  "TZ",
  // Where temporary files go: in a container with a read-only root this is the writable place.
  "TMPDIR",
];

const WINDOWS = [
  ...["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE"],
  ...["SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"],
  // TEMP's twin (programs read either); PATHEXT resolves `npx` to npx.cmd; COMSPEC is the shell a child's own child_process needs.
  ...["TMP", "PATHEXT", "COMSPEC"],
  "TZ",
];

export function defaultInherited(platform: NodeJS.Platform = process.platform): readonly string[] {
  return platform === "win32" ? WINDOWS : POSIX;
}

/** taskgate's own settings and secrets: they reach a child only when `inheritEnv` names them. */
const OWN = /^TASKGATE_/i;

/**
 * The child's environment: the default list, then everything `inheritEnv` names (or, with `all`,
 * all of taskgate's environment but its own `TASKGATE_*`), then `env`, whose values win.
 */
export function childEnvironment(
  parent: NodeJS.ProcessEnv,
  config: Pick<StdioUpstreamConfig, "env" | "inheritEnv">,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of defaultInherited(platform)) {
    const value = parent[name];
    // An exported shell function (`() { …`) is code, not a setting (the SDK skips them too).
    if (value !== undefined && !value.startsWith("()")) out[name] = value;
  }
  const { inheritEnv } = config;
  const named = inheritEnv === "all" ? Object.keys(parent).filter((name) => !OWN.test(name)) : inheritEnv;
  for (const name of named) {
    const value = parent[name];
    if (value !== undefined) out[name] = value;
  }
  return { ...out, ...config.env };
}
