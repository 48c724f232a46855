import type { Accepts } from "../wire/reply.js";
import { GatewayError } from "../wire/errors.js";
import type { JsonRpcMessage, JsonRpcRequest } from "../jsonrpc/message.js";
import type { LogContext } from "../observability/log-context.js";
import type { SessionRecord } from "../store/contract.js";
import type { LegacyFront } from "./legacy/legacy-front.js";
import { forwardedAuthorization } from "../util/forwarded-authorization.js";
import { isLegacyVersion } from "./legacy/versions.js";
import type { ModernFront, ModernRequest } from "./modern/modern-front.js";
import { isModernVersion, metaVersion } from "./modern/wire.js";

export interface FrontRequest {
  message: JsonRpcMessage;
  accepts: Accepts;
  sessionId?: string;
  protocolVersion?: string;
  mcpMethod?: string;
  mcpName?: string;
  /** Any request header by name, for the few looked up by name at run time (SEP-2243 Mcp-Param-*). */
  header?: (name: string) => string | undefined;
  /** The request's abort signal, given to tasks/result alone (the one method that waits on it). */
  signal?: AbortSignal;
  /** From the auth step (src/auth); undefined in auth mode none. */
  principal?: string;
  /** The client's Authorization header, only for an upstream with `http.forwardAuthorization`. */
  authorization?: string;
  /** What the lines about this request carry (its id, method, tool). */
  log?: LogContext;
}

/**
 * One path serves both eras (2026-07-28 "dual-era servers"): a message whose `_meta` names a
 * protocol version is modern and served statelessly; `initialize` and session traffic are legacy.
 */
export class Front {
  constructor(
    private readonly legacy: LegacyFront,
    private readonly modern: ModernFront,
  ) {}

  post(req: FrontRequest): Promise<Response> {
    return isModern(req) ? this.modern.post(modernRequest(req)) : this.legacy.post(req);
  }

  /** Whether answer() serves this message: a modern request whose method has a plain-message answer. */
  answers(message: JsonRpcMessage, sessionId: string | undefined, protocolVersion: string | undefined): boolean {
    return "method" in message && isModernMessage(message, sessionId, protocolVersion) && this.modern.answers(message.method);
  }

  /**
   * post() for a request answered with one plain message (ModernFront.answer), as the message;
   * undefined for any other, which post() serves.
   */
  answer(req: FrontRequest): Promise<JsonRpcMessage> | undefined {
    return isModern(req) ? this.modern.answer(modernRequest(req)) : undefined;
  }

  /**
   * For a request on the legacy wire: the session post() answers it in with one plain message
   * (LegacyFront.answerable), else undefined; the answer itself from answerIn().
   */
  answerableSession(req: FrontRequest): Promise<SessionRecord | undefined> {
    return isModern(req) ? Promise.resolve(undefined) : this.legacy.answerable(req);
  }

  answerIn(session: SessionRecord, request: JsonRpcRequest, log?: LogContext): Promise<JsonRpcMessage> {
    return this.legacy.answer(session, request, log);
  }

  get(accepts: Accepts, sessionId: string | undefined, protocolVersion: string | undefined, principal?: string): Promise<Response> {
    if (sessionId === undefined && isModernVersion(protocolVersion)) throw new GatewayError("modern_method_not_allowed");
    return this.legacy.get(accepts, sessionId, principal);
  }

  delete(sessionId: string | undefined, protocolVersion: string | undefined, principal?: string): Promise<Response> {
    if (sessionId === undefined && isModernVersion(protocolVersion)) throw new GatewayError("modern_method_not_allowed");
    return this.legacy.delete(sessionId, principal);
  }
}

function modernRequest(req: FrontRequest): ModernRequest {
  return {
    message: req.message,
    accepts: req.accepts,
    headers: { protocolVersion: req.protocolVersion, method: req.mcpMethod, name: req.mcpName },
    header: req.header,
    principal: req.principal,
    log: req.log,
    ...forwardedAuthorization(req.authorization),
  };
}

function isModern(req: FrontRequest): boolean {
  return isModernMessage(req.message, req.sessionId, req.protocolVersion);
}

function isModernMessage(message: JsonRpcMessage, sessionId: string | undefined, protocolVersion: string | undefined): boolean {
  if (!("method" in message)) return false;
  if (metaVersion(message.params) !== undefined) return true;
  // A request that names a non-legacy version in its header, outside any session, is a modern
  // request missing its _meta: the modern side answers it with the right error.
  return sessionId === undefined && message.method !== "initialize" && protocolVersion !== undefined && !isLegacyVersion(protocolVersion);
}

/** The wire `Front.post` will serve the message on, for metrics and logs. */
export function wireOf(message: JsonRpcMessage, sessionId: string | undefined, protocolVersion: string | undefined): "legacy" | "modern" {
  return isModernMessage(message, sessionId, protocolVersion) ? "modern" : "legacy";
}
