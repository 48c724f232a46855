import type { EventBus, SessionRecord } from "../../store/contract.js";

/** Bus channel on which a replica that ends a session names it, so every replica forgets it at once. */
export const SESSION_ENDED_CHANNEL = "sessions:ended";

/** Bounds memory when many sessions are active; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

/**
 * Legacy session records held in this process for a short time, so a session's calls do not
 * each wait on a store round trip. Correctness stays with the store:
 * - an entry is served for at most `ttlMs` after it was read from the store, then read again
 *   (which also pushes the session's idle expiry out, as every read does);
 * - a replica that ends a session publishes its id on SESSION_ENDED_CHANNEL and every replica drops
 *   it. Pub/sub is a hint: if that message is lost, another replica may still accept the ended
 *   session for at most `ttlMs`. That window is the price, and `sessions.cacheMs: 0` removes it.
 * Nothing is served from here until the subscription is active, so no hint can be missed before.
 */
export class SessionCache {
  private readonly entries = new Map<string, { record: SessionRecord; until: number }>();
  private listening = false;
  private subscribing?: Promise<unknown>;

  constructor(
    private readonly bus: EventBus,
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get(id: string): SessionRecord | undefined {
    this.listen();
    const entry = this.entries.get(id);
    if (!entry || !this.listening) return undefined;
    if (entry.until > this.clock()) return entry.record;
    this.entries.delete(id);
    return undefined;
  }

  put(record: SessionRecord): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(record.id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(record.id, { record, until: this.clock() + this.ttlMs });
  }

  /** Forget the session here and tell the other replicas to (best effort: a hint). */
  async ended(id: string): Promise<void> {
    this.entries.delete(id);
    await this.bus.publish(SESSION_ENDED_CHANNEL, id).catch(() => undefined);
  }

  private listen(): void {
    if (this.subscribing || this.ttlMs <= 0) return;
    this.subscribing = this.bus.subscribe(SESSION_ENDED_CHANNEL, (id) => this.entries.delete(id)).then(
      () => (this.listening = true),
      // Without the subscription the cache stays unused; the next call tries again.
      () => (this.subscribing = undefined),
    );
  }
}
