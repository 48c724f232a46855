import type { Overrides, Parsed } from "./overrides.js";
import { parseUpstreamSpec } from "./upstream-spec.js";
import { parsePort } from "./port.js";
import { seedList } from "./seed-list.js";
import { parseSentinelUrl } from "./sentinel-url.js";

export const ENV_NAMES = {
  configFile: "TASKGATE_CONFIG",
  host: "TASKGATE_HOST",
  port: "TASKGATE_PORT",
  redisUrl: "TASKGATE_REDIS_URL",
  redisCluster: "TASKGATE_REDIS_CLUSTER",
  redisSentinel: "TASKGATE_REDIS_SENTINEL",
  logLevel: "TASKGATE_LOG_LEVEL",
  logFormat: "TASKGATE_LOG_FORMAT",
  upstream: "TASKGATE_UPSTREAM",
  adminToken: "TASKGATE_ADMIN_TOKEN",
} as const satisfies Record<keyof Overrides, string>;

/**
 * TASKGATE_* → overrides. An empty variable counts as unset: compose files and shells often
 * define `VAR=` to mean "nothing", and an empty host or URL is never what was meant.
 */
export function readEnvOverrides(env: NodeJS.ProcessEnv): Parsed<Overrides> {
  const problems: string[] = [];
  const get = (name: string): string | undefined => (env[name] === "" ? undefined : env[name]);
  const overrides: Overrides = {};
  for (const key of ["configFile", "host", "redisUrl", "logLevel", "logFormat", "adminToken"] as const) {
    const value = get(ENV_NAMES[key]);
    if (value !== undefined) overrides[key] = value;
  }
  const cluster = get(ENV_NAMES.redisCluster);
  if (cluster !== undefined) overrides.redisCluster = seedList(cluster);
  const sentinel = get(ENV_NAMES.redisSentinel);
  const parsedSentinel = sentinel === undefined ? undefined : parseSentinelUrl(sentinel, ENV_NAMES.redisSentinel, problems);
  if (parsedSentinel !== undefined) overrides.redisSentinel = parsedSentinel;
  const port = get(ENV_NAMES.port);
  const parsedPort = port === undefined ? undefined : parsePort(port, ENV_NAMES.port, problems);
  if (parsedPort !== undefined) overrides.port = parsedPort;
  const spec = get(ENV_NAMES.upstream);
  if (spec !== undefined) {
    const upstream = parseUpstreamSpec(spec, ENV_NAMES.upstream, env);
    if (upstream.ok) overrides.upstream = upstream.transport;
    else problems.push(upstream.problem);
  }
  return { value: overrides, problems };
}
