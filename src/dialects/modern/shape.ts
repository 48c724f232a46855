import type { InitializeResultLike } from "../../upstream/connector.js";
import { CACHEABLE, META, TASKS_EXTENSION } from "./wire.js";
import { copyWithout, keepField, withFields } from "../../util/with-fields.js";

const MODERN_META_KEYS = new Set<string>([META.protocolVersion, META.clientCapabilities, META.clientInfo, "io.modelcontextprotocol/logLevel"]);

/**
 * The request as the legacy upstream gets it: the modern `_meta` keys removed (they mean nothing
 * to it), and `params.task` dropped on the modern wire, where it is never an opt-in (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md) —
 * an upstream that speaks the 2025-11-25 tasks natively must not start a task of its own.
 */
export function upstreamParams(method: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params) return params;
  // Copied key by key: a rest pattern and entries().filter() cost several objects on every call.
  const out = copyWithout(params, "_meta", "task");
  const task = params.task;
  if (method !== "tools/call" && task !== undefined) out.task = task;
  const meta = params._meta;
  if (typeof meta === "object" && meta !== null) {
    let kept: Record<string, unknown> | undefined;
    for (const key of Object.keys(meta)) if (!MODERN_META_KEYS.has(key)) keepField((kept ??= {}), key, (meta as Record<string, unknown>)[key]);
    if (kept) out._meta = kept;
  }
  return out;
}

/**
 * A legacy upstream's result as this wire needs it: `resultType` on every result (https://modelcontextprotocol.io/specification/2026-07-28/basic), caching
 * hints on cacheable ones (taskgate cannot know how long the upstream's lists stay fresh, so it
 * says "do not reuse": ttlMs 0, private), and the server's identity in `_meta`.
 */
export function modernResult(method: string, result: Record<string, unknown>, serverInfo: unknown): Record<string, unknown> {
  const out = withFields(result, { resultType: typeof result.resultType === "string" ? result.resultType : "complete" });
  if (CACHEABLE.has(method)) {
    out.ttlMs ??= 0;
    out.cacheScope ??= "private";
  }
  if (serverInfo !== undefined) out._meta = { ...(asRecord(result._meta) ?? {}), [META.serverInfo]: serverInfo };
  return out;
}

/** `server/discover` (https://modelcontextprotocol.io/specification/2026-07-28/basic): the upstream's capabilities plus the tasks extension, no legacy `tasks` slot. */
export function discoverResult(init: InitializeResultLike, supportedVersions: readonly string[]): Record<string, unknown> {
  const { tasks: _legacyTasks, ...capabilities } = init.capabilities;
  const extensions = { ...(asRecord(capabilities.extensions) ?? {}), [TASKS_EXTENSION]: {} };
  const result: Record<string, unknown> = {
    resultType: "complete",
    supportedVersions: [...supportedVersions],
    capabilities: { ...capabilities, extensions },
    ttlMs: 60_000,
    cacheScope: "public",
    _meta: { [META.serverInfo]: init.serverInfo },
  };
  if (init.instructions !== undefined) result.instructions = init.instructions;
  return result;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
