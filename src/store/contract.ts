/**
 * The state contract. One interface, two implementations (memory/, redis/), one shared test suite
 * (test/contract/store.contract.ts). Sessions now; tasks join this contract next.
 *
 * Every method is one atomic operation on the backing store: nothing here reads in TypeScript
 * and writes afterwards.
 */

/** A legacy-era front session (protocol versions with `initialize`). Any replica can serve it. */
export interface SessionRecord {
  id: string;
  /** The upstream (by config name) the session was opened against. */
  upstream: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: Record<string, unknown>;
  /** Who opened it: from the auth layer, or `session:<id>` without auth. */
  principal: string;
  createdAt: string; // ISO 8601
}

export interface SessionStore {
  /** Store a new session; it expires `ttlMs` after the last `getSession` that touched it. */
  createSession(record: SessionRecord, ttlMs: number): Promise<void>;
  /** Read a session and push its expiry out to `ttlMs` from now, in one round trip. */
  getSession(id: string, ttlMs: number): Promise<SessionRecord | undefined>;
  /** Remove it; true when it existed. */
  deleteSession(id: string): Promise<boolean>;
}

/** Hints between replicas. A lost message only delays: readers always re-read the store. */
export interface EventBus {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active. The returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
}

export interface Store extends SessionStore {
  readonly kind: "memory" | "redis";
  readonly bus: EventBus;
  /** Resolves when the backing store answers (for /readyz); rejects otherwise, within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The store did not answer: the caller turns this into -32603 "task store unavailable". */
export class StoreUnavailableError extends Error {
  constructor(cause?: unknown) {
    super("task store unavailable", { cause });
    this.name = "StoreUnavailableError";
  }
}
