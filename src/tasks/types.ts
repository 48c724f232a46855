import type { LogContext } from "../observability/log-context.js";
import type { JsonRpcRequest } from "../jsonrpc/message.js";
import type { Audit } from "../observability/audit.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { Store, TaskProtocol } from "../store/contract.js";
import { QueueWait, type CallClient, type CallOptions, type UpstreamCaller } from "../upstream/caller.js";
import type { BatchedWrites } from "./batched-writes.js";

export interface EngineOptions {
  replicaId: string;
  leaseMs: number;
  cancelGraceMs: number;
  statusWriteIntervalMs: number;
  /** Upper bound for an unanswered input request; the task's TTL bounds it anyway. */
  inputTimeoutMs?: number;
  /** How often the reaper looks for tasks whose owner stopped. */
  reaperIntervalMs: number;
  /** Runs of one call at most; 1 = never run again after its owner stopped. */
  maxAttempts: number;
  /** How long a call parked by an MRTR round waits for the client's retry (its requestState's life). */
  mrtrTimeoutMs: number;
  /** Non-terminal tasks one principal may hold; 0 or absent = no limit. */
  maxActiveTasksPerPrincipal?: number;
  /** A result (or error) larger than this, as JSON, fails the task instead of being stored. */
  maxResultBytes?: number;
}

export interface EngineDeps {
  store: Store;
  logger: Logger;
  metrics: Metrics;
  audit: Audit;
  options: EngineOptions;
  clock: () => number;
  /** Why this replica takes no new task (the store's format moved past it: store/format-check.ts); undefined while it may. */
  formatRefusal?: () => string | undefined;
  /** Where owned calls write their outcomes and status messages: batched, made by the engine. */
  writes: BatchedWrites;
}

/** What a TaskEngine is made from: it makes the rest of its deps. */
export type EngineParts = Omit<EngineDeps, "writes">;

/** One `tools/call` that may become a task, or a `prompts/get` or `resources/read` an MRTR round may park. */
export interface TaskCall {
  caller: UpstreamCaller;
  upstream: string;
  client: CallClient;
  principal: string;
  taskProtocol: TaskProtocol;
  request: JsonRpcRequest;
  ttlMs: number;
  pollIntervalMs: number;
  maxDurationMs?: number;
  /** The legacy-era front session the call came from (the 2025-11-25 tasks), kept with the task. */
  frontSession?: string;
  /** The front request that made the call: the task's lines ("task created", "task ended", audit) carry it. */
  log?: LogContext;
}

/**
 * Only a tools/call may become a task, name a tool, or run again elsewhere; a prompts/get or
 * resources/read goes through the engine only while an MRTR round holds it (parked).
 */
export function isToolCall(call: TaskCall): boolean {
  return call.request.method === "tools/call";
}

/**
 * How the engine runs a call: with progress asked for (it becomes statusMessage), and the task's
 * TTL, which an upstream that runs the call as a task of its own is asked for.
 */
export function taskCallOptions(ttlMs: number, principal?: string, ttlLeftMs = ttlMs): CallOptions & { trackProgress: true; ttlMs: number } {
  const queueWait = new QueueWait();
  queueWait.becameTask(ttlMs, ttlLeftMs);
  return principal === undefined ? { trackProgress: true, ttlMs, queueWait } : { trackProgress: true, ttlMs, principal, queueWait };
}

/** The bus channel a replica listens on for work routed to the calls it owns. */
export { ownerChannel } from "../store/channels.js";

/** The replica is draining (SIGTERM): it takes no new task; the caller answers "shutting down". */
export class ShuttingDownError extends Error {
  constructor() {
    super("taskgate is shutting down");
    this.name = "ShuttingDownError";
  }
}
