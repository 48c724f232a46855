import type { SessionRecord } from "../../store/contract.js";

/**
 * The sessions this replica has served lately, oldest dropped first. Read only while the store
 * does not answer, so a Redis outage does not cut off clients already in a session: what they do
 * that needs no store (plain passthrough) goes on; tasks still need the store.
 */
export class SessionCache {
  private readonly records = new Map<string, SessionRecord>();

  constructor(private readonly max = 10_000) {}

  remember(record: SessionRecord): void {
    this.records.delete(record.id);
    this.records.set(record.id, record);
    if (this.records.size > this.max) this.records.delete(this.records.keys().next().value as string);
  }

  recall(id: string): SessionRecord | undefined {
    return this.records.get(id);
  }

  forget(id: string): void {
    this.records.delete(id);
  }
}
