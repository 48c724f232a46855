import { randomBytes } from "node:crypto";

/**
 * The client id of a call that has no session of its own (a 2026-07-28 request, a dialect A task
 * call): unique, and one flat string. `randomUUID()` returns a rope of some twenty pieces (about
 * 600 bytes of heap) that a detached call would hold, in its client and the relay's maps, for as
 * long as the upstream runs.
 */
export function callClientId(prefix: string): string {
  return prefix + randomBytes(16).toString("base64url");
}
