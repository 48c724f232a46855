import type { Decoded } from "../jsonrpc/decode.js";
import type { JsonRpcId } from "../jsonrpc/message.js";
import { UpstreamError } from "./connector.js";

/** What a transport reading an upstream needs to fail one request. */
export interface RefusalHooks {
  isWaiting(id: JsonRpcId): boolean;
  failRequest(id: JsonRpcId, error: UpstreamError): void;
}

/**
 * An upstream message taskgate cannot take (too deep, too long, the wrong shape): when it is the
 * answer to a request still waiting, that request fails now with what was wrong and the setting
 * that bounds it (`depthSetting`, the setting that bounds nesting on this transport, when that
 * was the bound), instead of waiting for an answer that was already sent. True when it did.
 */
export function failAnswered(upstream: string, decoded: Extract<Decoded, { ok: false }>, depthSetting: string, hooks: RefusalHooks): boolean {
  if (!decoded.answer || decoded.id === null || !hooks.isWaiting(decoded.id)) return false;
  const limit = decoded.tooDeep ? ` (${depthSetting})` : "";
  hooks.failRequest(decoded.id, new UpstreamError(`upstream '${upstream}' sent an answer taskgate cannot take: ${decoded.detail}${limit}`, "protocol"));
  return true;
}

/** The response id of an overlong stdio line, from its first and last bytes, when its envelope shows it. */
export function overlongAnswerId(head: string, tail: string): JsonRpcId | undefined {
  // A response starts with its result or error (the id may come first); a request names its method.
  if (!/^\s*\{\s*("jsonrpc"\s*:\s*"2\.0"\s*,\s*)?("id"\s*:\s*(-?\d+|"[^"\\]{0,128}")\s*,\s*)?("jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(result|error)"/.test(head))
    return undefined;
  const id =
    /^\s*\{\s*("jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"[^"\\]{0,128}")\s*,/.exec(head)?.[2] ??
    /,\s*"id"\s*:\s*(-?\d+|"[^"\\]{0,128}")\s*\}\s*$/.exec(tail)?.[1];
  return id === undefined ? undefined : (JSON.parse(id) as JsonRpcId);
}
