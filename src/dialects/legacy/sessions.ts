import { randomBytes } from "node:crypto";
import { GatewayError, storeCall } from "../../http/errors.js";
import type { SessionRecord, SessionStore } from "../../store/contract.js";
import type { SessionCache } from "./session-cache.js";

/**
 * Front sessions of the legacy era, kept in the store so any replica serves any session.
 * Ids are 256 random bits, base64url: unguessable, never sequential.
 */
export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly upstream: string,
    private readonly idleTtlMs: number,
    private readonly cache?: SessionCache,
  ) {}

  async open(fields: Pick<SessionRecord, "protocolVersion" | "clientCapabilities" | "clientInfo">): Promise<SessionRecord> {
    const id = randomBytes(32).toString("base64url");
    const record: SessionRecord = {
      id,
      upstream: this.upstream,
      principal: `session:${id}`,
      createdAt: new Date().toISOString(),
      ...fields,
    };
    await storeCall(() => this.store.createSession(record, this.idleTtlMs));
    this.cache?.put(record);
    return record;
  }

  /** The session named by the request's `Mcp-Session-Id` header; 400 without one, 404 when unknown or ended. */
  async require(header: string | undefined): Promise<SessionRecord> {
    if (!header) throw new GatewayError("session_required");
    return this.cache?.get(header) ?? this.read(header);
  }

  /** Ending always asks the store: a second DELETE answers 404 even on a replica that cached the session. */
  async end(header: string | undefined): Promise<SessionRecord> {
    if (!header) throw new GatewayError("session_required");
    const record = await this.read(header);
    await storeCall(() => this.store.deleteSession(record.id));
    await this.cache?.ended(record.id);
    return record;
  }

  private async read(header: string): Promise<SessionRecord> {
    const record = await storeCall(() => this.store.getSession(header, this.idleTtlMs));
    // A session opened at another path belongs to another upstream: it does not exist here.
    if (!record || record.upstream !== this.upstream) throw new GatewayError("session_not_found");
    // Only a store read starts an entry's time, so a busy session is still re-read (and its idle
    // expiry pushed out) every cache period.
    this.cache?.put(record);
    return record;
  }
}

