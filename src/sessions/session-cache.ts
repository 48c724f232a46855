import type { EventBus, SessionRecord } from "../store/contract.js";

/** Bus channel on which a replica that ends a session names it, so every replica forgets it at once. */
export { SESSION_ENDED_CHANNEL } from "../store/channels.js";
import { SESSION_ENDED_CHANNEL } from "../store/channels.js";

/** Bounds memory when many sessions are active; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

/**
 * Legacy session records held in this process, for two reasons:
 * - speed (`get`): a session's calls do not each wait on a store round trip. An entry is served
 *   for at most `ttlMs` after it was read from the store, then read again (which also pushes the
 *   session's idle expiry out, as every read does). A replica that ends a session publishes its
 *   id on SESSION_ENDED_CHANNEL and every replica drops it. Pub/sub is a hint: if that message is
 *   lost, another replica may still accept the ended session for at most `ttlMs`; that window is
 *   the price, and `sessions.cacheMs: 0` removes it. Nothing is served by `get` until the
 *   subscription is active, so no hint can be missed before.
 * - outages (`recall`): while the store does not answer, the sessions this replica served lately
 *   stay usable for what needs no store (plain passthrough); tasks still need the store.
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

  /** A record read from the store within the last `ttlMs`, or undefined. */
  get(id: string): SessionRecord | undefined {
    this.listen();
    const entry = this.entries.get(id);
    if (!entry || !this.listening || entry.until <= this.clock()) return undefined;
    return entry.record;
  }

  /** Whatever this replica last knew of the session, however old: only while the store is down. */
  recall(id: string): SessionRecord | undefined {
    return this.entries.get(id)?.record;
  }

  put(record: SessionRecord): void {
    this.entries.delete(record.id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(record.id, { record, until: this.clock() + this.ttlMs });
  }

  forget(id: string): void {
    this.entries.delete(id);
  }

  /** Forget the session here and tell the other replicas to (best effort: a hint). */
  async ended(id: string): Promise<void> {
    this.entries.delete(id);
    await this.bus.publish(SESSION_ENDED_CHANNEL, id).catch(() => undefined);
  }

  private listen(): void {
    if (this.subscribing || this.ttlMs <= 0) return;
    this.subscribing = this.bus
      .subscribe(SESSION_ENDED_CHANNEL, (id) => this.entries.delete(id))
      .then(
        () => (this.listening = true),
        // Without the subscription the cache serves nothing fresh; the next call tries again.
        () => (this.subscribing = undefined),
      );
  }
}
