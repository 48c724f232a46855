import { randomBytes } from "node:crypto";
import { GatewayError, storeCall } from "../wire/errors.js";
import { StoreUnavailableError, type SessionRecord, type SessionStore } from "../store/contract.js";
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
    private readonly cache: SessionCache,
  ) {}

  /**
   * A new session, bound to the authenticated principal; without auth, to itself (`session:<id>`),
   * so the session id is then the handle to its tasks (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Security Considerations: bind when a context exists).
   */
  async open(fields: Pick<SessionRecord, "protocolVersion" | "clientCapabilities" | "clientInfo">, principal?: string): Promise<SessionRecord> {
    const id = randomBytes(32).toString("base64url");
    const record: SessionRecord = {
      id,
      upstream: this.upstream,
      principal: principal ?? `session:${id}`,
      createdAt: new Date().toISOString(),
      ...fields,
    };
    await storeCall(() => this.store.createSession(record, this.idleTtlMs));
    this.cache.put(record);
    return record;
  }

  /** What require() resolves with, when this replica holds it fresh and the principal owns it; else undefined (ask require()). */
  cached(header: string | undefined, principal?: string): SessionRecord | undefined {
    const record = header ? this.cache.get(header) : undefined;
    return record && ownedBy(record, principal) ? record : undefined;
  }

  /**
   * The session named by the request's `Mcp-Session-Id` header; 400 without one, 404 when unknown
   * or ended. With auth, another principal's session is unknown too: the same lookup, the same 404.
   */
  async require(header: string | undefined, principal?: string): Promise<SessionRecord> {
    if (!header) throw new GatewayError("session_required");
    const record = this.cache.get(header) ?? (await this.read(header));
    if (!ownedBy(record, principal)) throw new GatewayError("session_not_found");
    return record;
  }

  /** Ending always asks the store: a second DELETE answers 404 even on a replica that cached the session. */
  async end(header: string | undefined, principal?: string): Promise<SessionRecord> {
    if (!header) throw new GatewayError("session_required");
    const record = await this.read(header);
    if (!ownedBy(record, principal)) throw new GatewayError("session_not_found");
    await storeCall(() => this.store.deleteSession(record.id));
    await this.cache.ended(record.id);
    return record;
  }

  private async read(id: string): Promise<SessionRecord> {
    const record = await storeCall(() => this.fromStore(id));
    // A session opened at another path belongs to another upstream: it does not exist here.
    if (!record || record.upstream !== this.upstream) {
      this.cache.forget(id);
      throw new GatewayError("session_not_found");
    }
    return record;
  }

  /** From the store; only while it does not answer, from the sessions this replica served lately. */
  private async fromStore(id: string): Promise<SessionRecord | undefined> {
    try {
      const record = await this.store.getSession(id, this.idleTtlMs);
      // Only a store read starts an entry's time, so a busy session is still re-read (and its
      // idle expiry pushed out) every cache period.
      if (record) this.cache.put(record);
      return record;
    } catch (err) {
      const cached = err instanceof StoreUnavailableError ? this.cache.recall(id) : undefined;
      if (cached) return cached;
      throw err;
    }
  }
}

/**
 * Without auth (principal undefined) the session id alone is the handle. With auth, a session opened
 * without it (mode changed on a running deployment) is no one's and not served.
 */
function ownedBy(record: SessionRecord, principal: string | undefined): boolean {
  return principal === undefined || record.principal === principal;
}
