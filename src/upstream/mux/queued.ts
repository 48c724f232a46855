import type { MessageSink } from "../../jsonrpc/sink.js";
import { QUEUED_NOTICE, type CallClient, type CallOptions } from "../caller.js";
import type { Entry } from "./bulkhead.js";

export interface QueueNotices {
  onAhead: (ahead: number) => void;
  /** The call left the queue and runs now (said only when it was queued). */
  started(): void;
}

/**
 * Tells a task call's sink where it stands in its upstream's queue; the task turns it into its
 * statusMessage ("queued: 3 ahead"). Only sinks the task engine gave (trackProgress) get these:
 * they never reach a client.
 */
export function queueNotices(sink: MessageSink): QueueNotices {
  let waited = false;
  return {
    onAhead: (ahead) => {
      waited = true;
      sink.send({ jsonrpc: "2.0", method: QUEUED_NOTICE, params: { ahead } });
    },
    started: () => {
      if (waited) sink.send({ jsonrpc: "2.0", method: QUEUED_NOTICE, params: { ahead: null } });
    },
  };
}

/** Whether a call that got its slot may start: its task's store record says so first when it was queued (QueueWait.beforeStart). */
export function mayStart(options: CallOptions): Promise<boolean> | undefined {
  return options.queueWait?.beforeStart?.();
}

/** What a call brings to its upstream's queue: its notices, whose turn it takes (its principal; else its client session), how long it may wait. */
export function entryOf(client: CallClient, options: CallOptions, notices: QueueNotices | undefined, since?: number): Entry {
  return { onAhead: notices?.onAhead, principal: options.principal ?? client.sessionId, wait: options.queueWait, since };
}
