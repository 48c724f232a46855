import type { ConfigInput } from "./schema.js";
import type { SentinelInput } from "./sentinel-url.js";

export type UpstreamConfigInput = ConfigInput["upstreams"][number];

/** Where an upstream is reached, as `--upstream` / TASKGATE_UPSTREAM give it. */
export type UpstreamTransport = { stdio: { command: string; args: string[] } } | { http: { url: string } };

/** The settings flags and env may override; one shape for both, so precedence is one spread. */
export interface Overrides {
  configFile?: string;
  host?: string;
  port?: number;
  redisUrl?: string;
  /** Redis Cluster seed nodes; like redisUrl, it replaces where the file says the store is. */
  redisCluster?: string[];
  /** Redis Sentinel; like redisUrl, it replaces where the file says the store is. */
  redisSentinel?: SentinelInput;
  logLevel?: string;
  logFormat?: string;
  upstream?: UpstreamTransport;
  adminToken?: string;
}

export type Parsed<T> = { value: T; problems: string[] };

/** Later sources win; a key a source did not set never erases an earlier one. */
export function mergeOverrides(...sources: Overrides[]): Overrides {
  const merged: Overrides = {};
  for (const source of sources) {
    for (const [key, value] of Object.entries(source)) {
      if (value !== undefined) Object.assign(merged, { [key]: value });
    }
  }
  return merged;
}
