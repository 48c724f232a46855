import { z } from "zod";
import type { SessionRecord } from "./contract.js";

/**
 * The one serialisation of a session, shared by both stores so that memory behaves like Redis
 * (a stored copy, `undefined` fields dropped). Reading validates: another replica running a
 * different version may have written the record.
 */
const SessionJson = z.object({
  id: z.string(),
  upstream: z.string(),
  protocolVersion: z.string(),
  clientCapabilities: z.record(z.string(), z.unknown()),
  clientInfo: z.record(z.string(), z.unknown()).optional(),
  principal: z.string(),
  createdAt: z.string(),
}) satisfies z.ZodType<SessionRecord>;

export function encodeSession(record: SessionRecord): string {
  return JSON.stringify(record);
}

/** Throws on a malformed record: that is a defect to see, not an absent session. */
export function decodeSession(json: string): SessionRecord {
  return SessionJson.parse(JSON.parse(json));
}
