import type { Logger } from "pino";
import type { Store } from "./contract.js";
import { MemoryStore } from "./memory/memory-store.js";
import { RedisStore } from "./redis/redis-store.js";
import type { SentinelTarget } from "./redis/connection.js";
import type { WaitForReplicas } from "./redis/replicas.js";
import type { WaitForAof } from "./redis/aof-confirm.js";

export type { EventBus, SessionRecord, SessionStore, Store } from "./contract.js";
export { StoreUnavailableError } from "./contract.js";

export interface CreateStoreOptions {
  /** From `store.redisUrl`; without it (and without `cluster`), the in-process store. */
  redisUrl?: string;
  /** From `store.cluster`: Redis Cluster seed nodes. */
  cluster?: readonly string[];
  /** From `store.sentinel`. */
  sentinel?: SentinelTarget;
  /** From `store.waitForReplicas`, `store.waitTimeoutMs` and `store.waitForAof`. */
  waitForReplicas?: WaitForReplicas;
  waitTimeoutMs?: number;
  waitForAof?: WaitForAof;
  /** From `store.keyPrefix`; used by Redis only. */
  keyPrefix: string;
  logger?: Logger;
}

/**
 * Redis when a URL is configured, else memory. The loud start-up warning for memory (design:
 * State) belongs to the composition root, which knows it is starting a server, not a test.
 */
export function createStore(opts: CreateStoreOptions): Store {
  const target = opts.cluster?.length
    ? { cluster: opts.cluster }
    : opts.sentinel
      ? { sentinel: opts.sentinel }
      : opts.redisUrl
        ? { url: opts.redisUrl }
        : undefined;
  if (!target) return new MemoryStore({ logger: opts.logger });
  const { keyPrefix, logger, waitForReplicas, waitTimeoutMs, waitForAof } = opts;
  return new RedisStore({
    target,
    keyPrefix,
    ...(logger ? { logger } : {}),
    ...(waitForReplicas !== undefined ? { waitForReplicas } : {}),
    ...(waitTimeoutMs !== undefined ? { waitTimeoutMs } : {}),
    ...(waitForAof !== undefined ? { waitForAof } : {}),
  });
}
