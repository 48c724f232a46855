/**
 * The one backoff: the delay before try number `attempt` (1 = the first retry) grows from
 * `initialMs`, doubling each time, up to `maxMs`. Used to reconnect to Redis, to retry a store
 * write the owner must not drop, and (with jitter, upstream/backoff.ts) to restart an upstream.
 */
export function backoffDelayMs(attempt: number, initialMs: number, maxMs: number): number {
  if (attempt <= 1) return Math.min(initialMs, maxMs);
  return Math.min(maxMs, Math.max(1, initialMs) * 2 ** (attempt - 1));
}
