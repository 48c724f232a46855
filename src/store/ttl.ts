/**
 * Both stores refuse the same TTLs, so a caller's bug shows up under memory exactly as it
 * would under Redis (where `PX 0` or `PX 1.5` is a reply error).
 */
export function assertTtlMs(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`ttlMs must be a positive integer, got ${String(ttlMs)}`);
  }
}
