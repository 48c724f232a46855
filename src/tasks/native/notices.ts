import type { JsonRpcErrorObject, JsonRpcNotification } from "../../jsonrpc/message.js";
import { CANCELLED_CODE } from "../../upstream/caller.js";

/**
 * What the bridge tells the task a call runs as (never a client), through the call's sink like
 * QUEUED_NOTICE: the upstream task it follows, and that task's status as the upstream
 * reports it. A call that ends before it detaches drops them.
 */
export const UPSTREAM_TASK_NOTICE = "notifications/taskgate/upstream-task";
export const UPSTREAM_STATUS_NOTICE = "notifications/taskgate/upstream-status";

export interface UpstreamTaskNotice {
  taskId: string;
  session?: string;
  /** The upstream's ttl (ms from its creation of the task); null: unlimited. */
  ttlMs: number | null;
  /** When taskgate asked for the task (epoch ms): the upstream made it no earlier. */
  askedAt: number;
}

export function notice(method: string, params: Record<string, unknown>): JsonRpcNotification {
  return { jsonrpc: "2.0", method, params };
}

export function isBridgeNotice(method: string): boolean {
  return method === UPSTREAM_TASK_NOTICE || method === UPSTREAM_STATUS_NOTICE;
}

/** The upstream ended its own task `cancelled`: the call's error says so in `data.status`. */
export function cancelledUpstream(error: JsonRpcErrorObject): boolean {
  const data = error.data as { status?: unknown } | undefined;
  return error.code === CANCELLED_CODE && data?.status === "cancelled";
}
