import { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { StoreUnavailableError } from "../contract.js";
import { toStoreError } from "./errors.js";
import { backoffDelayMs } from "../../util/backoff.js";

/** A primary found through Redis Sentinel (https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/). */
export interface SentinelTarget {
  name: string;
  nodes: readonly string[];
  username?: string;
  password?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  tls?: boolean;
}

/** Where Redis is: one server by URL, a Redis Cluster by its seed nodes, or the primary the sentinels name. */
export type RedisTarget = { url: string } | { cluster: readonly string[] } | { sentinel: SentinelTarget };

/** `host:port` → what ioredis takes. */
export function hostPort(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(":");
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
}

export interface ConnectionOptions {
  target: RedisTarget;
  /** Shown by `CLIENT LIST`, so operators can tell our connections apart. */
  name: string;
  logger?: Logger;
  /** Longest a store call may take, waiting for the connection included. */
  callTimeoutMs: number;
  /** Longest one command may take once sent (default callTimeoutMs): a WAIT for replicas takes longer. */
  commandTimeoutMs?: number;
  /**
   * Send the commands of one event-loop turn in one write (ioredis auto-pipelining, flushed by
   * setImmediate). Each command is still its own request and reply, so a caller waits on one round
   * trip as before; concurrent requests share the system calls, in taskgate and in Redis.
   * Not for a subscriber connection.
   */
  autoPipelining?: boolean;
}

/** Reconnect soon after a restart, without hammering a server that stays down. */
export function reconnectDelayMs(attempt: number): number {
  return backoffDelayMs(attempt, 50, 1_000);
}

/**
 * One ioredis connection that never makes a caller hang: commands are sent only while it is
 * ready, and none is queued or resent after a reconnect, so a command the caller saw fail is not
 * replayed minutes later. Each call has one deadline; ioredis keeps reconnecting in the background.
 */
export class RedisConnection {
  readonly client: Redis | Cluster;
  private readonly callTimeoutMs: number;
  /** Shared by every call waiting during one outage: one listener, however many callers. */
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(opts: ConnectionOptions) {
    this.callTimeoutMs = opts.callTimeoutMs;
    const options = {
      connectionName: opts.name,
      retryStrategy: reconnectDelayMs,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout: opts.commandTimeoutMs ?? opts.callTimeoutMs,
      connectTimeout: 2_000,
      // Concurrent commands leave in one write (one round trip for the commands of many requests).
      enableAutoPipelining: opts.autoPipelining ?? false,
    };
    const target = opts.target;
    this.client =
      "url" in target
        ? new Redis(target.url, options)
        : "sentinel" in target
          ? new Redis({ ...options, ...sentinelOptions(target.sentinel) })
          : new Cluster([...target.cluster], {
              redisOptions: options,
              clusterRetryStrategy: reconnectDelayMs,
              enableOfflineQueue: false,
              // Concurrent commands to one node leave in one write: a batch of per-task scripts
              // (the outcome writes of calls that end together, the reaper's probes) costs one
              // round trip per node, not per task.
              enableAutoPipelining: true,
            });
    watchHealth(this.client, opts.name, opts.logger);
    // ioredis ends a client for good when a reconnect fails in some ways (a sentinel connector
    // cut mid-connect); a store connection never gives up while taskgate runs.
    let ended = 0;
    this.client.on("ready", () => (ended = 0));
    this.client.on("end", () => {
      if (this.closed) return;
      if (ended++ === 0) opts.logger?.warn({ connection: opts.name }, "redis connection ended; connecting again");
      setTimeout(() => {
        if (!this.closed && this.client.status === "end") this.client.connect().catch(() => undefined);
      }, reconnectDelayMs(ended)).unref();
    });
  }

  /** The primary's address as this connection last reached it (with Sentinel, it moves on a failover). */
  get address(): string {
    if (this.client instanceof Cluster) return "cluster";
    const { host, port } = this.client.options;
    return `${host}:${port}`;
  }

  /** A cluster routes by key slot: a pipeline may only hold keys of one node. */
  get isCluster(): boolean {
    return this.client instanceof Cluster;
  }

  /** Run `fn` once the connection is ready; rejects with StoreUnavailableError by the deadline. */
  async call<T>(fn: (client: Redis | Cluster) => Promise<T>, timeoutMs = this.callTimeoutMs): Promise<T> {
    try {
      return await withDeadline(
        this.whenReady().then(() => fn(this.client)),
        timeoutMs,
      );
    } catch (err) {
      throw toStoreError(err);
    }
  }

  /**
   * One command, bounded by ioredis's own `commandTimeout` (the same `callTimeoutMs`) instead of a
   * second timer and race per call: the store's hottest reads (a poll's one script) go through
   * here. Not ready yet: the same wait and deadline as `call`.
   */
  command<T>(fn: (client: Redis | Cluster) => Promise<T>): Promise<T> {
    if (this.closed || this.client.status !== "ready") return this.call(fn);
    try {
      return fn(this.client).catch(rethrowAsStoreError);
    } catch (err) {
      return Promise.reject(toStoreError(err));
    }
  }

  async close(): Promise<void> {
    // Set first: the client still reads "ready" for a moment after QUIT is answered.
    this.closed = true;
    if (this.client.status === "end") return;
    if (this.client.status !== "ready") return this.client.disconnect();
    try {
      await withDeadline(this.client.quit(), this.callTimeoutMs);
    } catch {
      this.client.disconnect();
    }
  }

  private whenReady(): Promise<void> {
    const status = this.client.status;
    if (this.closed || status === "end") return Promise.reject(new StoreUnavailableError(new Error("connection closed")));
    if (status === "ready") return Promise.resolve();
    // Each caller's own deadline bounds its wait; this promise only says when to go.
    this.ready ??= new Promise((resolve) =>
      this.client.once("ready", () => {
        this.ready = undefined;
        resolve();
      }),
    );
    return this.ready;
  }
}

/**
 * ioredis asks the sentinels for the primary on every (re)connect: a primary that died drops the
 * connection, and the next one goes to the replica they promoted. One that lives on as a replica
 * (demoted after a partition) answers writes READONLY, and the connection is made again
 * (`reconnectOnError`). Not ioredis's `failoverDetector`: it can cut a reconnect in progress, and
 * the client then ends for good (seen in test/e2e/redis-ha.test.ts).
 */
function sentinelOptions(t: SentinelTarget) {
  return {
    sentinels: t.nodes.map(hostPort),
    name: t.name,
    ...(t.username !== undefined ? { username: t.username } : {}),
    ...(t.password !== undefined ? { password: t.password } : {}),
    ...(t.sentinelUsername !== undefined ? { sentinelUsername: t.sentinelUsername } : {}),
    ...(t.sentinelPassword !== undefined ? { sentinelPassword: t.sentinelPassword } : {}),
    ...(t.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    sentinelRetryStrategy: reconnectDelayMs,
    reconnectOnError: (err: Error) => (/^READONLY\b/.test(err.message) ? 1 : false),
  };
}

function rethrowAsStoreError(err: unknown): never {
  throw toStoreError(err);
}

/** Settles as `work` does, or rejects with StoreUnavailableError after `timeoutMs`, whichever is first. */
async function withDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
  });
  work.catch(() => {}); // may settle after the deadline has already answered the caller
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** One warning per outage and one line when it is over, not one per reconnect attempt. */
function watchHealth(client: Redis | Cluster, name: string, logger?: Logger): void {
  let healthy = true;
  client.on("error", (err: Error) => {
    if (healthy) logger?.warn({ err, connection: name }, "redis unavailable; reconnecting");
    healthy = false;
  });
  client.on("ready", () => {
    if (!healthy) logger?.info({ connection: name }, "redis reachable again");
    healthy = true;
  });
}
