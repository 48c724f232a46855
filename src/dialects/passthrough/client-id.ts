import { randomBytes } from "node:crypto";
import type { SessionRecord } from "../../store/contract.js";
import type { CallClient } from "../../upstream/caller.js";
import { forwardedAuthorization } from "../../util/forwarded-authorization.js";

/** Random per process, so ids from two replicas never meet; the counter keeps them apart within one. */
const PROCESS_PART = randomBytes(12).toString("base64url");
let counter = 0;

/**
 * The client id of a call that has no session of its own (a 2026-07-28 request, a task of the 2025-11-25 tasks
 * call): unique, short and cheap to make. `randomUUID()` returns a rope of some twenty pieces
 * (about 600 bytes of heap) that a detached call would hold, in its client and the relay's maps,
 * for as long as the upstream runs; random bytes per request cost more CPU than the rest of
 * building the call.
 */
export function callClientId(prefix: string): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}${PROCESS_PART}.${counter.toString(36)}`;
}

/** A legacy session's client, per request: the session record holds no Authorization, each POST brings its own. */
export function sessionClient(session: SessionRecord, authorization?: string): CallClient {
  return { sessionId: session.id, capabilities: session.clientCapabilities, ...forwardedAuthorization(authorization) };
}
