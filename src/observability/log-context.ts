import { AsyncLocalStorage } from "node:async_hooks";
import type { Wire } from "./request-outcome.js";

/** What every log line written while serving one front request carries (pino mixin, logger.ts). */
export interface LogContext {
  reqId: string;
  /** The JSON-RPC method, once the body is decoded. */
  method?: string;
  /** The tool of a tools/call. */
  tool?: string;
  /** The wire the request came on, once the body is decoded. */
  wire?: Wire;
}

/**
 * The request's log context follows its async work, including a call that detaches into a task:
 * the task's later lines ("task ended") still name the request that created it.
 */
const storage = new AsyncLocalStorage<LogContext>();

export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
