import { LATEST_LEGACY_VERSION, LEGACY_VERSIONS } from "../../jsonrpc/versions.js";

/** The versions themselves live in jsonrpc/versions.ts, the one list. */
export { isLegacyVersion, LATEST_LEGACY_VERSION, LEGACY_VERSIONS } from "../../jsonrpc/versions.js";

/** The version a session speaks: the client's when we know it, else our newest (version negotiation, https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === "string" && (LEGACY_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_LEGACY_VERSION;
}
