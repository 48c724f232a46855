import { dirname, resolve } from "node:path";
import { ConfigSchema, type Config } from "./schema.js";
import { parseCliArgs } from "./cli-args.js";
import { readEnvOverrides } from "./env.js";
import { readConfigFile, type RawConfig } from "./file.js";
import { mergeOverrides, type Overrides, type UpstreamConfigInput, type UpstreamTransport } from "./overrides.js";
import { issuesToProblems } from "./problems.js";
import { RETIRED_KEYS, retiredKeyProblems, type RetiredKey } from "./retired.js";
import { expandSecrets, readKeyFiles } from "./secrets.js";

export { formatProblems } from "./problems.js";
export type { UpstreamConfigInput } from "./overrides.js";

export interface LoadConfigInput {
  /** Only the flags: no node, script or subcommand. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** Relative config paths are read from here. */
  cwd: string;
  /** The upstream used when neither a file nor --upstream / TASKGATE_UPSTREAM names one. */
  defaultUpstream: () => UpstreamConfigInput;
  /** Keys earlier versions accepted (tests give their own table). */
  retired?: readonly RetiredKey[];
}

export type LoadConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * The only place that reads env and files. Precedence: flags > TASKGATE_* env > YAML file >
 * schema defaults. Every problem from every source is collected before giving up, and the
 * schema parses the merged input once, so one run names every mistake.
 */
export function loadConfig({ argv, env, cwd, defaultUpstream, retired = RETIRED_KEYS }: LoadConfigInput): LoadConfigResult {
  const flags = parseCliArgs(argv, env);
  const fromEnv = readEnvOverrides(env);
  const overrides = mergeOverrides(fromEnv.value, flags.value);
  const problems = [...flags.problems, ...fromEnv.problems];
  let raw: RawConfig = { upstreams: overrides.upstream ? [] : [defaultUpstream()] };
  if (overrides.configFile !== undefined) {
    const file = readConfigFile(overrides.configFile, cwd);
    // Without the file's content the schema would only report keys that are missing.
    if (!file.ok) return { ok: false, problems: [...problems, ...file.problems] };
    raw = file.raw;
  }
  // Parsed even after a bad flag, so the file's own mistakes are named in the same run.
  const parsed = ConfigSchema.safeParse(expandSecrets(applyOverrides(raw, overrides), env, problems));
  // A retired key is named with its replacement, and not again as an unknown key.
  const retiredProblems = retiredKeyProblems(raw, retired);
  const named = new Set(retiredProblems.map((p) => `${p.slice(0, p.indexOf(":"))}: unknown key`));
  problems.push(...retiredProblems);
  if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues).filter((p) => !named.has(p)));
  if (!parsed.success || retiredProblems.length > 0) return { ok: false, problems };
  const config = { ...parsed.data, auth: readKeyFiles(parsed.data.auth, keyDir(overrides.configFile, cwd), problems) };
  return problems.length === 0 ? { ok: true, config } : { ok: false, problems };
}

/** Returns a copy of `raw` with the overrides written in; `raw` itself is left alone. */
function applyOverrides(raw: RawConfig, o: Overrides): RawConfig {
  const out: RawConfig = { ...raw };
  if (o.host !== undefined || o.port !== undefined) out["listen"] = { ...section(raw["listen"]), ...pick({ host: o.host, port: o.port }) };
  if (o.redisUrl !== undefined || o.redisCluster !== undefined || o.redisSentinel !== undefined) {
    // Where the store is, as a flag or env names it, replaces the file's answer (URL, cluster or sentinel).
    // Several named at once stay several, and the schema says to pick one.
    const { redisUrl: _url, cluster: _cluster, sentinel: _sentinel, ...rest } = section(raw["store"]);
    out["store"] = { ...rest, ...pick({ redisUrl: o.redisUrl, cluster: o.redisCluster, sentinel: o.redisSentinel }) };
  }
  if (o.logLevel !== undefined) out["log"] = { ...section(out["log"]), level: o.logLevel };
  if (o.logFormat !== undefined) out["log"] = { ...section(out["log"]), format: o.logFormat };
  // A secret is better in the environment (a Kubernetes Secret) than in the config file.
  if (o.adminToken !== undefined) out["admin"] = { ...section(raw["admin"]), token: o.adminToken };
  if (o.upstream !== undefined) out["upstreams"] = withUpstream(raw["upstreams"], o.upstream);
  return out;
}

/**
 * The spec replaces the first upstream's transport (its name, path and tool policies stay),
 * or becomes the single upstream `default` at /mcp when the file has none.
 */
function withUpstream(upstreams: unknown, transport: UpstreamTransport): unknown {
  if (upstreams === undefined || upstreams === null || (Array.isArray(upstreams) && upstreams.length === 0)) {
    return [{ name: "default", path: "/mcp", ...transport }];
  }
  if (!Array.isArray(upstreams) || !isSection(upstreams[0])) return upstreams; // the schema will say what is wrong
  const { stdio: _stdio, http: _http, ...kept } = upstreams[0];
  return [{ ...kept, ...transport }, ...upstreams.slice(1)];
}

/** Key files named in the config file are read relative to it. */
function keyDir(configFile: string | undefined, cwd: string): string {
  return configFile === undefined ? cwd : dirname(resolve(cwd, configFile));
}

function isSection(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A section of the file to merge into; a malformed one is replaced, as the flag is explicit. */
function section(value: unknown): Record<string, unknown> {
  return isSection(value) ? value : {};
}

function pick(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}
