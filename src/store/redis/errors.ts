import { StoreUnavailableError } from "../contract.js";

/** Replies meaning "this server cannot serve you right now", not "your command is wrong". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

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
