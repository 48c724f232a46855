/** store.sentinel as TASKGATE_REDIS_SENTINEL and --redis-sentinel give it in one string. */
export interface SentinelInput {
  name: string;
  nodes: string[];
  username?: string;
  password?: string;
  tls?: boolean;
}

/**
 * `redis+sentinel://[user:password@]host:port[,host:port...]/<name>` (`rediss+sentinel://` for
 * TLS), the form other Redis clients take: the credentials are the servers', as in a redis:// URL.
 * The sentinels' own password, when they have one, goes in the file (store.sentinel.sentinelPassword).
 */
export function parseSentinelUrl(value: string, source: string, problems: string[]): SentinelInput | undefined {
  const m = /^(rediss?)\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/@]+)\/([^/?#]+)\/?$/.exec(value.trim());
  if (!m) {
    problems.push(`${source}: expected redis+sentinel://[user:password@]host:port[,host:port...]/<name>`);
    return undefined;
  }
  const [, scheme, user, password, hosts, name] = m;
  const nodes = hosts!
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  const sentinel: SentinelInput = { name: decodeURIComponent(name!), nodes };
  if (user) sentinel.username = decodeURIComponent(user);
  if (password !== undefined) sentinel.password = decodeURIComponent(password);
  if (scheme === "rediss") sentinel.tls = true;
  return sentinel;
}
