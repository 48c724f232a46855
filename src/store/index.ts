import type { Logger } from "pino";
import type { Store } from "./contract.js";
import { MemoryStore } from "./memory/memory-store.js";
import { RedisStore } from "./redis/redis-store.js";

export type { EventBus, SessionRecord, SessionStore, Store } from "./contract.js";
export { StoreUnavailableError } from "./contract.js";

export interface CreateStoreOptions {
  /** From `store.redisUrl`; without it (and without `cluster`), the in-process store. */
  redisUrl?: string;
  /** From `store.cluster`: Redis Cluster seed nodes. */
  cluster?: readonly string[];
  /** From `store.keyPrefix`; used by Redis only. */
  keyPrefix: string;
  logger?: Logger;
}

/**
 * Redis when a URL is configured, else memory. The loud start-up warning for memory (design:
 * State) belongs to the composition root, which knows it is starting a server, not a test.
 */
export function createStore(opts: CreateStoreOptions): Store {
  if (opts.cluster?.length) return new RedisStore({ target: { cluster: opts.cluster }, keyPrefix: opts.keyPrefix, logger: opts.logger });
  if (opts.redisUrl) return new RedisStore({ target: { url: opts.redisUrl }, keyPrefix: opts.keyPrefix, logger: opts.logger });
  return new MemoryStore({ logger: opts.logger });
}
