import type { Wire } from "./request-outcome.js";

/**
 * What the lines written while serving one front request carry: the request id, and the method
 * (and tool) once the body is decoded. Handed on by value, never looked up: the HTTP layer makes
 * it (http/observe.ts, http/direct-path.ts), the front request carries it to the dialects, a task
 * call to the engine, an owned call keeps it for its task's later lines ("task ended").
 *
 * Not AsyncLocalStorage: on Node 20 entering one turns on a promise hook for every promise of the
 * process, about a tenth of the CPU of a poll (bench b, docs/contributing/performance.md).
 */
export interface LogContext {
  reqId: string;
  /** The JSON-RPC method, once the body is decoded. */
  method?: string;
  /** The tool of a tools/call. */
  tool?: string;
  /** The wire the request came on, once the body is decoded. */
  wire?: Wire;
}
