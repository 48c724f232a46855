import type { JsonRpcId } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { CallClient } from "../../tasks/caller.js";
import type { Ticket } from "./bulkhead.js";

/** A request the relay has sent upstream (or queued), until it is answered. */
export interface InFlight {
  client: CallClient;
  frontId: JsonRpcId;
  sink: MessageSink;
  /** Set by cancel(): the call is answered as cancelled. */
  abandoned?: boolean;
  /** Stops waiting for the upstream's answer (a closure rather than an AbortSignal: see UpstreamRequest). */
  stop?: () => void;
  upstreamId?: JsonRpcId;
  frontProgressToken?: string | number;
  /** The token the upstream was given, so forgetting the call is one delete, not a scan. */
  upstreamProgressToken?: string;
  cancelSent?: boolean;
  /** Its place in the bulkhead's queue, until it starts: leaving it means it never starts. */
  queue?: Ticket | undefined;
}

/** Every field set from the start: one shape for all calls, none added later (issue 16). */
export function inFlight(client: CallClient, frontId: JsonRpcId, sink: MessageSink): InFlight {
  return { client, frontId, sink, abandoned: false, stop: undefined, upstreamId: undefined, frontProgressToken: undefined, upstreamProgressToken: undefined, cancelSent: false, queue: undefined };
}
