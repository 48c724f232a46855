/**
 * Every MCP protocol version taskgate knows, the one list: the wires it serves, the version it
 * asks its upstreams for, and which version has which task protocol.
 */

/** Versions with an `initialize` handshake and sessions ("legacy era"). Newest first. */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export const LATEST_LEGACY_VERSION = LEGACY_VERSIONS[0];

/** The stateless protocol revisions (https://modelcontextprotocol.io/specification/2026-07-28/basic). */
export const MODERN_VERSIONS = ["2026-07-28"] as const;
/** The stateless revision taskgate speaks to an upstream that offers it. */
export const MODERN_VERSION = MODERN_VERSIONS[0];

/** The one legacy version with tasks: the 2025-11-25 tasks (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks). */
export const TASKS_2025_VERSION = "2025-11-25";

/** The version taskgate asks the upstream for; the upstream may answer with an older one. */
export const UPSTREAM_PROTOCOL_VERSION = "2025-11-25";

export function isLegacyVersion(version: string): boolean {
  return (LEGACY_VERSIONS as readonly string[]).includes(version);
}

export function isModernVersion(version: string | undefined): boolean {
  return version !== undefined && (MODERN_VERSIONS as readonly string[]).includes(version);
}

/**
 * Which param a 2026-07-28 request's `Mcp-Name` header mirrors, per method: both ways, the one the
 * gateway checks on the front and the one it sends upstream (SEP-2243,
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http; tasks/*
 * by the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
 */
export const MCP_NAME_PARAM: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};
