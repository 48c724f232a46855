import { parseArgs } from "node:util";
import type { Overrides, Parsed } from "./overrides.js";
import { parseUpstreamSpec } from "./upstream-spec.js";
import { parsePort } from "./port.js";
import { seedList } from "./seed-list.js";
import { parseSentinelUrl } from "./sentinel-url.js";

/** The serve flags; each takes a value. */
const FLAGS = {
  config: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  redis: { type: "string" },
  "redis-cluster": { type: "string" },
  "redis-sentinel": { type: "string" },
  upstream: { type: "string" },
  "log-level": { type: "string" },
} as const;

type FlagName = keyof typeof FLAGS;

/**
 * Flags → overrides. `argv` holds only the flags (no node, script or subcommand). Parsed
 * leniently and checked token by token, so every unknown flag or missing value is reported
 * at once rather than only the first.
 */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): Parsed<Overrides> {
  const problems: string[] = [];
  const values = new Map<FlagName, string>();
  const args = markMissingValues(argv);
  const { tokens } = parseArgs({ args, options: FLAGS, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === "positional") problems.push(`unexpected argument "${token.value}"`);
    if (token.kind !== "option") continue;
    if (!isFlag(token.name)) problems.push(`unknown flag ${token.rawName}`);
    else if (token.value === undefined || token.value === "") problems.push(`${token.rawName} needs a value`);
    else values.set(token.name, token.value);
  }
  return { value: toOverrides(values, env, problems), problems };
}

/**
 * Lenient parseArgs would take the next flag as the value (`--port --host h` → port "--host"),
 * hiding both mistakes; an empty inline value marks the missing one instead.
 */
function markMissingValues(argv: string[]): string[] {
  return argv.map((arg, i) => {
    const next = argv[i + 1];
    const bare = /^--([^=]+)$/.exec(arg);
    return bare?.[1] !== undefined && isFlag(bare[1]) && (next === undefined || next.startsWith("-")) ? `${arg}=` : arg;
  });
}

function isFlag(name: string): name is FlagName {
  return Object.hasOwn(FLAGS, name);
}

function toOverrides(values: Map<FlagName, string>, env: NodeJS.ProcessEnv, problems: string[]): Overrides {
  const overrides: Overrides = {};
  const set = <K extends keyof Overrides>(key: K, value: Overrides[K] | undefined): void => {
    if (value !== undefined) overrides[key] = value;
  };
  set("configFile", values.get("config"));
  set("host", values.get("host"));
  set("redisUrl", values.get("redis"));
  const cluster = values.get("redis-cluster");
  if (cluster !== undefined) set("redisCluster", seedList(cluster));
  const sentinel = values.get("redis-sentinel");
  if (sentinel !== undefined) set("redisSentinel", parseSentinelUrl(sentinel, "--redis-sentinel", problems));
  set("logLevel", values.get("log-level"));
  const port = values.get("port");
  if (port !== undefined) set("port", parsePort(port, "--port", problems));
  const spec = values.get("upstream");
  if (spec !== undefined) {
    const upstream = parseUpstreamSpec(spec, "--upstream", env);
    if (upstream.ok) set("upstream", upstream.transport);
    else problems.push(upstream.problem);
  }
  return overrides;
}
