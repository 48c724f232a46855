import type { JsonRpcErrorObject, JsonRpcRequest } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import { RPC } from "../../jsonrpc/codes.js";

export interface Root {
  uri: string;
  name?: string | undefined;
}

/** How an upstream's questions that belong to no client call are answered. */
export interface QuestionPolicy {
  /** Decides which advice the log gives: over HTTP attribution is by stream, over stdio by process. */
  transport: "stdio" | "http";
  /**
   * The connection runs one call at a time (a pool member: a stdio process, an HTTP session): a
   * question outside any call's stream (HTTP: on the session's GET stream) belongs to its call.
   * Over stdio a lone call owns its process's questions in any case.
   */
  oneCallPerConnection?: boolean;
  /** upstreams[].roots: the answer to a roots/list outside any call. */
  roots?: readonly Root[] | undefined;
}

export type Outcome = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

/**
 * A server→client request made while no client call was in flight on its process (stdio) or
 * outside any call's stream (HTTP): e.g. the roots/list a filesystem server asks right after
 * `initialized`. Nobody can be asked, so roots come from the configuration and the rest is refused.
 */
export function answerUnowned(request: JsonRpcRequest, policy: QuestionPolicy, logger: Logger): Outcome {
  const where =
    policy.transport === "stdio"
      ? "no client call was running on its process"
      : policy.oneCallPerConnection
        ? "no client call was running on its upstream session"
        : "it came outside any client call's stream";
  if (request.method === "roots/list" && policy.roots) {
    logger.info({ method: request.method, roots: policy.roots.length }, `answered the upstream's roots/list from upstreams[].roots (${where})`);
    return { result: { roots: policy.roots.map((r) => ({ ...r })) } };
  }
  const advice = request.method === "roots/list" ? "; set upstreams[].roots to answer it" : "";
  logger.warn({ method: request.method }, `refused a request from the upstream that belongs to no client call (${where})${advice}`);
  const message =
    request.method === "roots/list"
      ? "taskgate has no roots to give outside a client call (upstreams[].roots is not set)"
      : "taskgate has no client to ask: this request belongs to no client call";
  return { error: { code: RPC.INTERNAL_ERROR, message } };
}

/**
 * What a question of a cancelled call is answered with, so the server's handler can unwind:
 * an elicitation is declined as `cancel` (2025-11-25 elicitation: the user
 * dismissed it), anything else gets an error. The question is never shown to anyone.
 */
export function cancelledAnswer(method: string): Outcome {
  if (method === "elicitation/create") return { result: { action: "cancel" } };
  return { error: { code: RPC.INTERNAL_ERROR, message: "the client call that asked this was cancelled" } };
}
