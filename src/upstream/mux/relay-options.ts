import type { JsonRpcErrorObject } from "../../jsonrpc/message.js";
import { RPC } from "../../jsonrpc/codes.js";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import { CANCELLED_CODE, type CallClient, type CallOptions, type UpstreamCaller } from "../caller.js";
import { UpstreamError } from "../connector.js";
import { QueueTimeoutError, QueueTtlError, type Bulkhead } from "./bulkhead.js";
import type { ListChangedHub } from "./list-changed.js";
import type { SessionStreams } from "./session-streams.js";
import type { QuestionPolicy } from "./unowned.js";

export type { CallOptions } from "../caller.js";

/** Calls made on processes of their own (`isolation: pool`): the relay hands them over. */
export interface PooledCalls extends UpstreamCaller {
  endSession(client: CallClient): Promise<void>;
  /** False when the upstream's calls run on the home connection after all (an HTTP upstream that keeps no sessions). */
  takesCalls(): boolean;
  /** A caller's list request on a member of its profile; undefined when none is to be had at once (it then runs on the home connection). */
  list(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options?: CallOptions): Promise<JsonRpcResponse | undefined>;
}

export interface RelayOptions {
  /** Set on the home connection of a pooled upstream: the methods in CALL_METHODS go there. */
  calls?: PooledCalls | undefined;
  /** The upstream's bulkhead for calls run on this connection (isolation shared; an HTTP upstream without sessions): calls beyond it wait their turn. */
  bulkhead?: Bulkhead | undefined;
  /** Questions that belong to no call; and whether a lone call on this connection owns the rest. */
  questions?: QuestionPolicy | undefined;
  /** The front sessions' streams, when the relays of a pool share the home relay's. */
  streams?: SessionStreams | undefined;
  /** A process of a pool serves calls only: it restores no session state (subscriptions, log level) after a restart. */
  poolMember?: boolean | undefined;
  /** Where the upstream's list-changed notifications go besides the sessions' streams; one per upstream, shared by its pool. */
  listChanged?: ListChangedHub | undefined;
}

/** The requests that run a server handler on the client's behalf, and so may ask the client something. */
export const CALL_METHODS: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"]);

/** Lists whose answer a server may shape by what the client declared (an MCP Apps server lists its app tools only to hosts that render them). */
export const LIST_METHODS: ReadonlySet<string> = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list"]);

/** Cancelled while it waited in the upstream's queue: the upstream never saw it. */
export const CANCELLED_BEFORE_START: JsonRpcErrorObject = { code: CANCELLED_CODE, message: "Request cancelled before it reached the upstream" };

/** Cancelled by the client: the upstream will not answer (2025-11-25 cancellation), so we do. */
export const CANCELLED: JsonRpcErrorObject = { code: CANCELLED_CODE, message: "Request cancelled by the client" };

export function frontKey(sessionId: string, id: JsonRpcId): string {
  return `${sessionId}\u0000${typeof id}:${String(id)}`;
}

export function upstreamFailure(name: string, err: unknown): JsonRpcErrorObject {
  // The queue's own errors name the upstream and the setting already.
  if (err instanceof QueueTimeoutError || err instanceof QueueTtlError) return { code: RPC.INTERNAL_ERROR, message: err.message };
  const detail = err instanceof UpstreamError ? err.message : err instanceof Error ? err.message : String(err);
  return { code: RPC.INTERNAL_ERROR, message: `upstream '${name}' failed: ${detail}` };
}
