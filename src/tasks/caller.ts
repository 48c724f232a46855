import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { RPC } from "../jsonrpc/codes.js";

/** Who a call is made for: the relay keeps their ids and capabilities apart. */
export interface CallClient {
  sessionId: string;
  capabilities: Record<string, unknown>;
  /**
   * The client's own Authorization header, present only when its upstream forwards it
   * (`http.forwardAuthorization`). In memory only: a task record keeps the capabilities, never
   * this, so a call run again on another replica after its owner stopped runs without it.
   */
  authorization?: string;
}

/**
 * `{ authorization }` when there is one to forward, else nothing: spread into a request or a
 * client, so the key is absent rather than present and undefined wherever no header is forwarded.
 */
export function forwardedAuthorization(authorization: string | undefined): { authorization?: string } {
  return authorization === undefined ? {} : { authorization };
}

/**
 * What the engine needs of an upstream: make a call whose related messages go to a sink, and
 * cancel it. The relay over the shared upstream session implements it; the engine never sees
 * transports or HTTP.
 */
export interface UpstreamCaller {
  call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options?: { trackProgress?: boolean }): Promise<JsonRpcResponse>;
  cancel(client: CallClient, frontId: JsonRpcId, reason?: string, options?: { abandon?: boolean }): Promise<void>;
  /** Answer a server→client request that was handed to the call's sink under `response.id`. */
  answer(client: CallClient, response: JsonRpcResponse): Promise<boolean>;
}

/** The code a call answers with once abandoned after a cancel (the upstream will not answer). */
export const CANCELLED_CODE = RPC.REQUEST_CANCELLED;

/**
 * Sent by a caller to the sink of a call the task engine made (never to a client): the call waits
 * in its upstream's queue with `params.ahead` calls before it, or (`ahead: null`) has started.
 */
export const QUEUED_NOTICE = "notifications/taskgate/queued";
