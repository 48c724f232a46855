/** Protocol versions with an `initialize` handshake and sessions ("legacy era"). Newest first. */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export const LATEST_LEGACY_VERSION = LEGACY_VERSIONS[0];

/** The version a session speaks: the client's when we know it, else our newest (lifecycle §version negotiation). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === "string" && (LEGACY_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LATEST_LEGACY_VERSION;
}

export function isLegacyVersion(version: string): boolean {
  return (LEGACY_VERSIONS as readonly string[]).includes(version);
}
