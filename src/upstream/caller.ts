import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../jsonrpc/message.js";
import type { StreamResume } from "./connector.js";

export type { StreamResume } from "./connector.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { RPC } from "../jsonrpc/codes.js";
import { forwardedAuthorization } from "../util/forwarded-authorization.js";

/** Who a call is made for: the relay keeps their ids and capabilities apart. */
export interface CallClient {
  sessionId: string;
  capabilities: Record<string, unknown>;
  /** taskgate's own request (it reads the upstream's tool list for itself): on the home session, never a caller's profile. */
  own?: true;
  /**
   * The client's own Authorization header, present only when its upstream forwards it
   * (`http.forwardAuthorization`). In memory only: a task record keeps the capabilities, never
   * this, so a call run again on another replica after its owner stopped runs without it.
   */
  authorization?: string;
  /**
   * The upstream session the call's messages go on, when it is not the connector's own: a
   * task of the upstream's that another replica started in its session.
   */
  upstreamSession?: string;
}

/** What goes upstream with a client's messages: its forwarded Authorization, and the session its upstream task lives in. */
export function onBehalfOf(client: CallClient): { authorization?: string; session?: string } {
  const out = forwardedAuthorization(client.authorization);
  return client.upstreamSession === undefined ? out : { ...out, session: client.upstreamSession };
}

/**
 * What the engine needs of an upstream: make a call whose related messages go to a sink, and
 * cancel it. The relay over the shared upstream session implements it; the engine never sees
 * transports or HTTP.
 */
export interface UpstreamCaller {
  call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options?: CallOptions): Promise<JsonRpcResponse>;
  cancel(client: CallClient, frontId: JsonRpcId, reason?: string, options?: CancelOptions): Promise<void>;
  /** Answer a server→client request that was handed to the call's sink under `response.id`. */
  answer(client: CallClient, response: JsonRpcResponse): Promise<boolean>;
  /**
   * Follow, as the call `request`, the response stream of a call another replica made, from
   * `position` (a STREAM_NOTICE it was told): nothing runs again; the answer is the upstream's
   * own. Only a caller over Streamable HTTP has it.
   */
  resumeStream?(client: CallClient, request: JsonRpcRequest, position: StreamResume, sink: MessageSink, options?: CallOptions): Promise<JsonRpcResponse>;
}

export interface CallOptions {
  /**
   * Made by the task engine: the call hears of its queue place and its stream's position, for the
   * task it may become, and the upstream is asked for progress even when the client did not
   * (detached calls turn it into statusMessage) unless `askProgress` is false.
   */
  trackProgress?: boolean;
  /**
   * False for a call of the task engine that can never become a task: it keeps what
   * `trackProgress` brings (its queue place and stream position) but the upstream is not asked
   * for progress on the engine's behalf, which no statusMessage would show. A client's own
   * progress token is relayed all the same.
   */
  askProgress?: boolean;
  /** The front task's TTL, for a call the upstream runs as a task of its own. */
  ttlMs?: number;
  /** Whose call it is: a full upstream's queue takes turns by principal (docs/operations/isolation.md, the bulkhead). */
  principal?: string;
  /** How long the call may wait for a free slot: set for a call that is, or may become, a task. */
  queueWait?: QueueWait;
}

/**
 * How long a call may wait in its upstream's queue: `queueTimeoutMs` while a client holds a
 * connection for it; once it is a task, until shortly before its TTL runs out (the TTL is how long
 * the client agreed to wait). The engine makes one per call and says when the call became a task.
 */
export class QueueWait {
  /** performance.now() after which a task stops waiting; undefined while it is a plain (blocking) call. */
  until: number | undefined;
  /** The task's TTL, for the error that says why it stopped waiting. */
  ttlMs = 0;
  private changed: (() => void) | undefined;
  /**
   * Set while the call's task is marked queued in the store: awaited once the call has its slot,
   * before anything goes upstream, so the store says it started before it does (another replica
   * queues a stopped owner's queued task again, never a started one). False: it must not start
   * (its task moved on: cancelled, or held by another replica now).
   */
  beforeStart: (() => Promise<boolean>) | undefined;

  /** The call is a task from now on: it may wait for `ttlLeftMs` less a margin to write its failure in. */
  becameTask(ttlMs: number, ttlLeftMs: number): void {
    this.ttlMs = ttlMs;
    this.until = performance.now() + Math.max(0, ttlLeftMs - queueMarginMs(ttlMs));
    this.changed?.();
  }

  /** @internal The queue the call waits in listens for the change. */
  watch(changed: (() => void) | undefined): void {
    this.changed = changed;
  }
}

/** A task that never got a slot fails this long before its TTL ends, so its failure can still be read: a tenth of the TTL, at most 10 s. */
export function queueMarginMs(ttlMs: number): number {
  return Math.min(10_000, Math.floor(ttlMs / 10));
}

export interface CancelOptions {
  /** false: ask the upstream to stop, but keep waiting for its answer (a result may still win). */
  abandon?: boolean;
  /**
   * Stop waiting without asking the upstream to stop a task of its own, or a call whose
   * response stream can be resumed (STREAM_NOTICE): another replica follows it from now on (a
   * lost lease, a hand-over at shutdown). Any other call is cancelled upstream as usual.
   */
  keepUpstreamTask?: boolean;
}

/** The code a call answers with once abandoned after a cancel (the upstream will not answer). */
export const CANCELLED_CODE = RPC.REQUEST_CANCELLED;

/**
 * Sent by a caller to the sink of a call the task engine made (never to a client): the call waits
 * in its upstream's queue with `params.ahead` calls before it, or (`ahead: null`) has started.
 */
export const QUEUED_NOTICE = "notifications/taskgate/queued";

/**
 * Sent by a caller to the sink of a call the task engine made (never to a client), once per
 * call: its response stream carries event ids and can be resumed from `params` (a StreamResume)
 * by another replica (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
 * Resumability and Redelivery).
 */
export const STREAM_NOTICE = "notifications/taskgate/stream";
