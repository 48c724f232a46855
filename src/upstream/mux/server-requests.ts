import type { JsonRpcId, JsonRpcRequest } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { CallClient } from "../caller.js";

interface Pending {
  upstreamId: JsonRpcId;
  method: string;
  /** The call that asked (compared by identity), so its questions can be withdrawn together. */
  owner: object;
  /** The client whose call asked: its answer goes upstream on that client's behalf. */
  client: CallClient;
  sink: MessageSink;
}

/**
 * Server→client requests relayed to front clients, waiting for their answers. Front ids are minted
 * here (`<replica prefix>-<n>`), so answers from different clients never collide even though the
 * upstream numbers its own requests in one space.
 */
export class ServerRequests {
  private readonly pending = new Map<string, Pending>();
  private next = 0;

  constructor(private readonly prefix: string) {}

  /** Relay `request` to `sink`; undefined when the sink cannot take it. */
  relay(request: JsonRpcRequest, client: CallClient, sink: MessageSink, owner: object): string | undefined {
    const frontId = `${this.prefix}-${++this.next}`;
    this.pending.set(frontId, { upstreamId: request.id, method: request.method, owner, client, sink });
    if (sink.send({ ...request, id: frontId })) return frontId;
    this.pending.delete(frontId);
    return undefined;
  }

  /** The pending request a front answer belongs to, if it is this session's; removes it. */
  take(frontId: JsonRpcId, sessionId: string): Pending | undefined {
    const key = String(frontId);
    const entry = this.pending.get(key);
    if (!entry || entry.client.sessionId !== sessionId) return undefined;
    this.pending.delete(key);
    return entry;
  }

  /** The upstream withdrew one of its requests (notifications/cancelled): who must hear of it. */
  withdraw(upstreamId: JsonRpcId): { frontId: string; sink: MessageSink } | undefined {
    for (const [frontId, entry] of this.pending) {
      if (entry.upstreamId !== upstreamId) continue;
      this.pending.delete(frontId);
      return { frontId, sink: entry.sink };
    }
    return undefined;
  }

  /** Every question `owner` asked that is still open, removed: its call was cancelled. */
  takeAll(owner: object): Pending[] {
    const taken: Pending[] = [];
    for (const [frontId, entry] of this.pending) {
      if (entry.owner !== owner) continue;
      this.pending.delete(frontId);
      taken.push(entry);
    }
    return taken;
  }

  /** Every open question, removed. */
  takeEvery(): Pending[] {
    const taken = [...this.pending.values()];
    this.pending.clear();
    return taken;
  }

  /** The upstream session restarted: its request ids mean nothing any more. */
  clear(): void {
    this.pending.clear();
  }
}
