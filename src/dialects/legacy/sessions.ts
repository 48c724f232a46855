import { randomBytes } from "node:crypto";
import { GatewayError, storeCall } from "../../http/errors.js";
import type { SessionRecord, SessionStore } from "../../store/contract.js";

/**
 * Front sessions of the legacy era, kept in the store so any replica serves any session.
 * Ids are 256 random bits, base64url: unguessable, never sequential.
 */
export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly upstream: string,
    private readonly idleTtlMs: number,
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
    return record;
  }

  /** The session named by the request's `Mcp-Session-Id` header; 400 without one, 404 when unknown or ended. */
  async require(header: string | undefined): Promise<SessionRecord> {
    if (!header) throw new GatewayError("session_required");
    const record = await storeCall(() => this.store.getSession(header, this.idleTtlMs));
    // A session opened at another path belongs to another upstream: it does not exist here.
    if (!record || record.upstream !== this.upstream) throw new GatewayError("session_not_found");
    return record;
  }

  async end(header: string | undefined): Promise<SessionRecord> {
    const record = await this.require(header);
    await storeCall(() => this.store.deleteSession(record.id));
    return record;
  }
}

