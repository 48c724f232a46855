import { failure, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { CANCELLED_CODE, type CallClient, type UpstreamCaller } from "../../tasks/caller.js";
import type { StdioPool } from "../../upstream/stdio/stdio-pool.js";
import type { ListChangedHub } from "./list-changed.js";
import { Relay, type CallOptions } from "./relay.js";

/**
 * `isolation: per-call` on a stdio upstream: each call the task engine makes runs in an upstream
 * process of its own, taken warm from the pool and ended (stdin closed, then SIGTERM, SIGKILL)
 * when the call ends, including after a cancel and its grace period. With one call per process,
 * a server→client request can only belong to that call: attribution is exact (design.md).
 */
/** A call's place: its relay once its process is taken; a cancel that came before is remembered. */
interface Slot {
  relay?: Relay;
  cancelled?: boolean;
}

const CANCELLED = { code: CANCELLED_CODE, message: "Request cancelled before it reached the upstream" };

export class PerCallCaller implements UpstreamCaller {
  private readonly active = new Map<string, Slot>();
  private next = 0;

  constructor(
    private readonly pool: StdioPool,
    private readonly logger: Logger,
    private readonly idPrefix: string,
    private readonly metrics: Metrics,
    /** The upstream's hub: a list may change in a per-call process as well. */
    private readonly listChanged?: ListChangedHub,
  ) {}

  async call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options?: CallOptions): Promise<JsonRpcResponse> {
    const key = callKey(client.sessionId, request.id);
    if (this.active.has(key)) return failure(request.id, { code: -32600, message: `request id ${String(request.id)} is already in flight` });
    const slot: Slot = {};
    this.active.set(key, slot);
    const connector = await this.pool.take().catch((err: unknown) => err as Error);
    try {
      if (connector instanceof Error) return failure(request.id, { code: -32603, message: `upstream '${this.pool.name}' failed: ${connector.message}` });
      if (slot.cancelled) return failure(request.id, CANCELLED);
      slot.relay = new Relay(connector, this.logger, `${this.idPrefix}-c${++this.next}`, this.metrics, this.listChanged);
      return await slot.relay.call(client, request, sink, options);
    } finally {
      this.active.delete(key);
      if (!(connector instanceof Error)) void connector.close().catch((err: unknown) => this.logger.warn({ err }, "could not stop a per-call upstream process"));
    }
  }

  async cancel(client: CallClient, frontId: JsonRpcId, reason?: string, options?: { abandon?: boolean }): Promise<void> {
    const slot = this.active.get(callKey(client.sessionId, frontId));
    if (!slot) return;
    // Cancelled while its process was being taken: it never starts.
    if (!slot.relay) slot.cancelled = true;
    else await slot.relay.cancel(client, frontId, reason, options);
  }

  /** Front ids of server→client requests are minted per relay, so only the right one takes it. */
  async answer(client: CallClient, response: JsonRpcResponse): Promise<boolean> {
    for (const { relay } of this.active.values()) if (relay && (await relay.answer(client, response))) return true;
    return false;
  }

  /** Calls running in a process of their own right now. */
  get inFlight(): number {
    return this.active.size;
  }

  async close(): Promise<void> {
    await this.pool.close();
    await Promise.allSettled([...this.active.values()].map((slot) => slot.relay?.connector.close()));
  }
}

function callKey(sessionId: string, id: JsonRpcId): string {
  return `${sessionId}\u0000${typeof id}:${String(id)}`;
}
