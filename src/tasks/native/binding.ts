import type { TaskRecord, UpstreamTaskRef } from "../../store/contract.js";

/** What a front task learns when its call becomes an upstream task. */
export interface Binding {
  ref: UpstreamTaskRef;
  /** A shorter life for the front task, when the upstream keeps its task less long; else undefined. */
  ttlMs?: number;
}

/**
 * The upstream task an UPSTREAM_TASK_NOTICE names, and the front TTL it allows: the upstream
 * counts its ttl from its own creation of the task, which came no earlier than `askedAt`, so
 * the front task (created at `createdAt`) must end by `askedAt + ttl` at the latest. The front
 * TTL never outlives what the upstream keeps (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, TTL and Resource Management).
 */
export function bindingOf(task: Pick<TaskRecord, "createdAt" | "ttlMs">, params: Record<string, unknown>): Binding | undefined {
  const { taskId, session, ttlMs, askedAt } = params;
  if (typeof taskId !== "string" || taskId.length === 0) return undefined;
  const ref: UpstreamTaskRef = typeof session === "string" ? { taskId, session } : { taskId };
  if (typeof ttlMs !== "number" || typeof askedAt !== "number" || !Number.isFinite(ttlMs)) return { ref };
  const allowed = Math.max(1, Math.floor(askedAt + ttlMs - task.createdAt));
  return allowed < task.ttlMs ? { ref, ttlMs: allowed } : { ref };
}
