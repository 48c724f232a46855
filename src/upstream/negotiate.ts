import { RPC } from "../jsonrpc/codes.js";
import { isFailure, type JsonRpcErrorObject, type JsonRpcResponse } from "../jsonrpc/message.js";
import { LEGACY_VERSIONS } from "../jsonrpc/versions.js";
import { UpstreamError, type InitializeResultLike } from "./connector.js";
import { initializeParams, readInitializeResult } from "./handshake.js";
import { META_SERVER_INFO, MODERN_PROTOCOL_VERSION, clientCapabilitiesFor, isObject, withEnvelope } from "./modern/envelope.js";

/** legacy: `initialize` and a session (2025-11-25 and older); modern: the stateless 2026-07-28 wire. */
export type UpstreamGeneration = "legacy" | "modern";
/** `upstreams[].generation`: auto prefers the legacy session and follows the upstream to 2026-07-28. */
export type GenerationSetting = "auto" | UpstreamGeneration;

const UNSUPPORTED_VERSION = RPC.UNSUPPORTED_VERSION;

/**
 * What an upstream spoke last, per upstream configuration: the era is a property of the server,
 * so every process of a stdio pool and every reconnection starts from it (clients SHOULD cache
 * it and MAY keep it across restarts, re-probing when it fails:
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
 */
const remembered = new WeakMap<object, UpstreamGeneration>();

export const generationMemory = {
  of: (config: object): UpstreamGeneration | undefined => remembered.get(config),
  keep: (config: object, generation: UpstreamGeneration): void => void remembered.set(config, generation),
};

export interface Negotiated {
  generation: UpstreamGeneration;
  result: InitializeResultLike;
}

/** One request of the negotiation, answered or rejected as the session's requests are. */
export type Exchange = (method: string, params: Record<string, unknown>) => Promise<JsonRpcResponse>;

/**
 * Which protocol to speak with the upstream (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
 * `auto` sends `initialize` first, so a dual-era server keeps the session taskgate has always
 * had with it (docs/concepts/upstreams.md); an -32022 answer naming 2026-07-28 is followed to
 * the stateless wire (`server/discover`), one naming another legacy version to an `initialize`
 * with that one, and an upstream that refuses `initialize` otherwise is asked `server/discover`.
 * Nothing is sent twice unchanged but a refused probe, once, so a refusal never turns into a loop;
 * the connector's backoff decides when the whole negotiation is tried again. `remembered`: what
 * the upstream spoke last time, tried first (the spec lets a client keep the era across restarts,
 * re-probing if it fails). `probeModern` (Streamable HTTP): an upstream never seen is first sent
 * a modern request (see `probe`).
 */
export async function negotiate(
  exchange: Exchange,
  setting: GenerationSetting,
  remembered: UpstreamGeneration | undefined,
  name: string,
  { probeModern = false, capabilities }: { probeModern?: boolean; capabilities?: Record<string, unknown> | undefined } = {},
): Promise<Negotiated> {
  if (setting === "auto" && remembered === undefined && probeModern) {
    const modern = await probe(exchange, name);
    if (modern) return modern;
    return initializeFollowing(exchange, setting, name, capabilities);
  }
  if (setting === "modern" || (setting === "auto" && remembered === "modern")) {
    const modern = await discover(exchange, name);
    if ("result" in modern) return spoken(modern);
    if (setting === "modern")
      throw new UpstreamError(
        `upstream '${name}' does not speak protocol ${MODERN_PROTOCOL_VERSION} (upstreams[].generation: modern): ${modern.why}`,
        "protocol",
      );
  }
  return initializeFollowing(exchange, setting, name, capabilities);
}

async function initializeFollowing(
  exchange: Exchange,
  setting: GenerationSetting,
  name: string,
  capabilities: Record<string, unknown> | undefined,
): Promise<Negotiated> {
  let version: string = LEGACY_VERSIONS[0];
  for (;;) {
    const response = await exchange("initialize", initializeParams(version, capabilities)).catch((err: unknown) => refusedByTransport(err));
    if (!("error" in response) || response.error.code !== UNSUPPORTED_VERSION) {
      if (!isFailure(response)) return { generation: "legacy", result: readInitializeResult(response, name) };
      // Not a version answer: a modern-only server that does not name its versions (the spec's SHOULD) may still answer discover.
      if (setting === "auto") {
        const modern = await discover(exchange, name);
        if ("result" in modern) return spoken(modern);
      }
      return { generation: "legacy", result: readInitializeResult(response, name) }; // throws the refusal
    }
    const supported = supportedOf(response.error);
    if (supported.includes(MODERN_PROTOCOL_VERSION) && setting !== "legacy") return modernOrThrow(await discover(exchange, name), name);
    const next = LEGACY_VERSIONS.find((v) => supported.includes(v)) as string | undefined;
    if (next === undefined || next === version) throw noCommonVersion(name, supported, setting);
    version = next;
  }
}

/**
 * Streamable HTTP, an upstream never seen (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#backward-compatibility):
 * a modern request first, so a 2026-07-28-only server gets its header and `_meta` from the first
 * POST on. An answer naming 2026-07-28 alone makes the upstream modern; one that names a legacy
 * version too (a dual-era server) keeps the session taskgate has always had with it, as anything
 * that is not a modern answer does (no answer in time included): `initialize` follows. -32022
 * listing 2026-07-28 is retried once, as the spec asks of a client whose version was refused.
 */
async function probe(exchange: Exchange, name: string): Promise<Negotiated | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    // A server that never answers the modern request, or drops it, is no modern one either.
    const outcome = await discover(exchange, name).catch((err: unknown): { why: string; supported?: string[] } => {
      if (err instanceof UpstreamError && (err.reason === "timeout" || err.reason === "closed")) return { why: err.message };
      throw err;
    });
    if ("result" in outcome) return outcome.legacyToo ? undefined : spoken(outcome);
    if (!outcome.supported?.includes(MODERN_PROTOCOL_VERSION)) return undefined;
  }
  return undefined;
}

/**
 * `server/discover` under the 2026-07-28 envelope; `why` when the answer says the upstream is not
 * modern (with the versions of a -32022). `legacyToo`: it names a legacy version taskgate speaks.
 */
async function discover(exchange: Exchange, name: string): Promise<(Negotiated & { legacyToo: boolean }) | { why: string; supported?: string[] }> {
  let response: JsonRpcResponse;
  try {
    response = await exchange("server/discover", withEnvelope(undefined, clientCapabilitiesFor(undefined)));
  } catch (err) {
    // An HTTP 4xx without a JSON-RPC answer is how a legacy server refuses a modern request (2026-07-28 streamable-http, backward compatibility).
    if (err instanceof UpstreamError && err.reason === "protocol") return { why: err.message };
    throw err;
  }
  if (isFailure(response)) {
    const why = `server/discover answered ${response.error.message} (${response.error.code})`;
    return response.error.code === UNSUPPORTED_VERSION ? { why, supported: supportedOf(response.error) } : { why };
  }
  const result = response.result;
  const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
  if (!versions.includes(MODERN_PROTOCOL_VERSION)) return { why: `it supports ${JSON.stringify(versions)}` };
  if (!isObject(result.capabilities))
    throw new UpstreamError(`upstream '${name}' sent an unusable server/discover result: capabilities is not an object`, "protocol");
  const info = isObject(result.serverInfo) ? result.serverInfo : isObject(result._meta) ? result._meta[META_SERVER_INFO] : undefined;
  const serverInfo =
    isObject(info) && typeof info.name === "string" && typeof info.version === "string"
      ? (info as InitializeResultLike["serverInfo"])
      : { name, version: "unknown" };
  const instructions = typeof result.instructions === "string" ? { instructions: result.instructions } : {};
  const legacyToo = versions.some((v) => (LEGACY_VERSIONS as readonly unknown[]).includes(v));
  return {
    generation: "modern",
    legacyToo,
    result: { protocolVersion: MODERN_PROTOCOL_VERSION, capabilities: result.capabilities, serverInfo, ...instructions },
  };
}

const spoken = ({ generation, result }: Negotiated): Negotiated => ({ generation, result });

function modernOrThrow(outcome: Negotiated | { why: string }, name: string): Negotiated {
  if ("result" in outcome) return spoken(outcome);
  throw new UpstreamError(`upstream '${name}' named ${MODERN_PROTOCOL_VERSION} among its versions but server/discover failed: ${outcome.why}`, "protocol");
}

/** An HTTP 4xx to `initialize` without a JSON-RPC answer: a refusal like any other, so `auto` may still probe. */
function refusedByTransport(err: unknown): JsonRpcResponse {
  if (err instanceof UpstreamError && err.reason === "protocol")
    return { jsonrpc: "2.0", id: null, error: { code: RPC.INVALID_REQUEST, message: err.message } };
  throw err;
}

function supportedOf(error: JsonRpcErrorObject): string[] {
  const data = error.data;
  const supported = isObject(data) && Array.isArray(data.supported) ? data.supported : [];
  return supported.filter((v): v is string => typeof v === "string");
}

function noCommonVersion(name: string, supported: string[], setting: GenerationSetting): UpstreamError {
  const ours = setting === "legacy" ? LEGACY_VERSIONS : [MODERN_PROTOCOL_VERSION, ...LEGACY_VERSIONS];
  const hint = setting === "legacy" && supported.includes(MODERN_PROTOCOL_VERSION) ? " (upstreams[].generation is legacy)" : "";
  return new UpstreamError(`upstream '${name}' speaks ${supported.join(", ") || "no version it named"}; taskgate speaks ${ours.join(", ")}${hint}`, "protocol");
}
