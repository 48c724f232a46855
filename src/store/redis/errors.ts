import type { ChainableCommander } from "ioredis";
import { StoreUnavailableError } from "../contract.js";

/**
 * Replies meaning "this server cannot serve you right now", not "your command is wrong". A MOVED or
 * ASK reaches the store only from a pipeline ioredis did not redirect (its slot moved in a failover).
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS|MOVED|ASK)\b/;

/**
 * The one mapping from what ioredis throws to what the store throws. Connection loss, timeouts
 * and transient replies mean the store is unavailable; any other reply error is a defect in
 * our command (or script) and keeps its own message.
 */
export function toStoreError(err: unknown): Error {
  if (err instanceof StoreUnavailableError) return err;
  if (err instanceof Error && err.name === "ReplyError" && !TRANSIENT_REPLY.test(err.message)) return err;
  return new StoreUnavailableError(err);
}

/**
 * Runs a pipeline and fails as its first failed command would alone: `exec()` resolves even when
 * the connection dropped under it, with each command's error beside its reply, and a caller that
 * only awaited it would take a write the store never made for done.
 */
export async function execChecked(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  const failed = replies.find(([err]) => err);
  if (failed) throw toStoreError(failed[0]);
  return replies.map(([, reply]) => reply);
}
