/**
 * Every bus channel name, the one list: both buses (memory, Redis) carry them, and the Redis bus
 * puts the store's key prefix before each (store/redis/keys.ts, `channel`). Messages on them are
 * hints; everything must be correct by polling alone (design: Replicas).
 */

/** A task's hints (a change was written); the stores publish here, `settle` listens. */
export function taskChannel(taskId: string): string {
  return `task:${taskId}`;
}

/** A principal's new tasks, for the 2025-11-25 tasks' GET stream (tasks/principal-watch.ts). */
export function principalChannel(principal: string): string {
  return `principal:${principal}`;
}

/** Work routed to the calls one replica owns: a cancel, answers (tasks/owner.ts). */
export function ownerChannel(replicaId: string): string {
  return `owner:${replicaId}`;
}

/** A replica that ends a legacy session names it here, so every replica forgets it at once. */
export const SESSION_ENDED_CHANNEL = "sessions:ended";
