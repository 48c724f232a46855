import { isFailure, type JsonRpcResponse } from "../jsonrpc/message.js";
import { GATEWAY_CLIENT_CAPABILITIES, GATEWAY_CLIENT_INFO, UPSTREAM_PROTOCOL_VERSION, UpstreamError, type InitializeResultLike } from "./connector.js";

/**
 * The `initialize` taskgate makes: `capabilities` are those of the callers the session serves
 * (a pool member's profile, upstream/mux/profiles.ts), else taskgate's own for its home session.
 */
export function initializeParams(
  protocolVersion: string = UPSTREAM_PROTOCOL_VERSION,
  capabilities: Record<string, unknown> = GATEWAY_CLIENT_CAPABILITIES,
): Record<string, unknown> {
  return {
    protocolVersion,
    capabilities,
    clientInfo: GATEWAY_CLIENT_INFO,
  };
}

/**
 * The upstream's answer to our `initialize`, checked just enough that the rest of taskgate can rely
 * on the fields it reads; everything else is kept untouched for relaying to front clients.
 */
export function readInitializeResult(response: JsonRpcResponse, upstreamName: string): InitializeResultLike {
  if (isFailure(response)) {
    const { code, message } = response.error;
    throw new UpstreamError(`upstream '${upstreamName}' refused initialize: ${message} (${code})`, "protocol");
  }
  const result = response.result;
  const problem = shapeProblem(result);
  if (problem) throw new UpstreamError(`upstream '${upstreamName}' sent an unusable initialize result: ${problem}`, "protocol");
  return result as InitializeResultLike;
}

function shapeProblem(result: Record<string, unknown>): string | undefined {
  if (typeof result.protocolVersion !== "string") return "protocolVersion is not a string";
  if (!isObject(result.capabilities)) return "capabilities is not an object";
  const info = result.serverInfo;
  if (!isObject(info) || typeof info.name !== "string" || typeof info.version !== "string") return "serverInfo needs a name and a version";
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
