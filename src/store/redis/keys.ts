import { taskChannel } from "../contract.js";

/**
 * The only place Redis key names are built, and where the bus channel names (the one list is
 * ../channels.ts) get the prefix.
 *
 * Every key of one session or task carries the same hash tag (the part in braces), so Redis
 * Cluster puts them in one slot and one script may touch them all:
 *   session       <prefix>{s:<id>}
 *   task          <prefix>{t:<id>}         hash: scalar fields, `in:<key>`, `ans:<key>`
 *   its outcome   <prefix>{t:<id>}:out     JSON (large payloads stay out of the hash)
 *   its holder    <prefix>{t:<id>}:lease   the token of the replica lease it is held under (as long as the task)
 *   leases        <prefix>{leases}         sorted set: replica lease token → when it lapses (store time, ms)
 *   held tasks    <prefix>{held:<token>}   set of the task ids created or claimed under a lease token
 *   its spares    <prefix>{held:<token>:<k>}  the same, k < HELD_SPARES, where the first set's primary refused the write
 *   flagged       <prefix>{flag:<owner>}   set of task ids waiting for their owner (a cancel, answers)
 *   all tasks     <prefix>{all:<n>}:tasks  sorted set of task ids by expiry (admin listing), n < ALL_SHARDS
 *   lock          <prefix>{lock:<name>}    SET NX PX holder (the reaper's guard)
 *   format        <prefix>{format}         hash: format, oldest, version (store/format.ts)
 *   channel       <prefix>ch:<name>        pub/sub is not slot-bound; no tag needed
 *
 * The index of every task for operators is split over sorted sets with a hash tag of their own, a
 * task's shard a stable hash of its id (`shardOf`), so in Redis Cluster it spreads over slots (and
 * nodes) instead of making one hot key; its reader (the admin listing) reads every shard, each in
 * its own slot. The tasks held under one lease token share that token's slot: the reaper reads
 * the set of a lapsed token only.
 */
export const ALL_SHARDS = 16;
/** Spares of each lease token's held set (heldSpare). */
export const HELD_SPARES = 8;

/** A stable hash of a task id, the shard of each index it is in: `shardOf(id, ALL_SHARDS)`. */
export function shardOf(taskId: string, shards: number): number {
  let h = 0;
  for (let i = 0; i < taskId.length; i++) h = (h * 31 + taskId.charCodeAt(i)) >>> 0;
  return h % shards;
}

export class RedisKeys {
  constructor(readonly prefix: string) {
    // A brace in the prefix would become the hash tag of every key and put all in one slot.
    if (/[{}]/.test(prefix)) throw new RangeError(`store.keyPrefix must not contain braces: ${prefix}`);
  }

  session(id: string): string {
    return `${this.prefix}{s:${id}}`;
  }

  task(id: string): string {
    return `${this.prefix}{t:${id}}`;
  }

  taskOutcome(id: string): string {
    return `${this.task(id)}:out`;
  }

  taskLease(id: string): string {
    return `${this.task(id)}:lease`;
  }

  /** The full name RedisBus subscribes to for `taskChannel(id)`; scripts publish to it. */
  taskChannel(id: string): string {
    return this.channel(taskChannel(id));
  }

  /** A task's keys, in the order its scripts take them: hash, outcome, lease. */
  taskKeys(id: string): { hash: string; outcome: string; lease: string } {
    return { hash: this.task(id), outcome: this.taskOutcome(id), lease: this.taskLease(id) };
  }

  /** A principal's task index (tasks/list of the 2025-11-25 tasks), a sorted set by creation time. */
  principalTasks(principal: string): string {
    return `${this.prefix}{p:${principal}}`;
  }

  /** Every replica lease: token → when it lapses. */
  leases(): string {
    return `${this.prefix}{leases}`;
  }

  /** The tasks created or claimed under a replica lease token. */
  heldUnder(token: string): string {
    return `${this.prefix}{held:${token}}`;
  }

  /**
   * A spare of `heldUnder(token)`, in a slot of its own: a task is listed in spare
   * `shardOf(id, HELD_SPARES)` when the primary of the first set cannot take (or confirm) the
   * write, so one shard in trouble does not stop a replica's creations on the others.
   */
  heldSpare(token: string, k: number): string {
    return `${this.prefix}{held:${token}:${k}}`;
  }

  /** The tasks waiting for their owner's attention (a cancel, answers). */
  flagged(owner: string): string {
    return `${this.prefix}{flag:${owner}}`;
  }

  lock(name: string): string {
    return `${this.prefix}{lock:${name}}`;
  }

  /** The shard of every task, for operators (the admin API), a task belongs to: sorted sets by expiry time. */
  allTasksShardOf(taskId: string): string {
    return this.allTasksShard(shardOf(taskId, ALL_SHARDS));
  }

  allTasksShard(n: number): string {
    return `${this.prefix}{all:${n}}:tasks`;
  }

  /** A principal's live tasks for limits.maxActiveTasksPerPrincipal: a sorted set, scored by expiry. */
  principalQuota(principal: string): string {
    return `${this.prefix}{q:${principal}}`;
  }

  /** The store's format (store/format.ts). */
  format(): string {
    return `${this.prefix}{format}`;
  }

  /** A shard of format 1's live index, read only to find replicas of that format (store/format.ts). */
  formatOneLiveShard(n: number): string {
    return `${this.prefix}{live:${n}}`;
  }

  channel(name: string): string {
    return `${this.prefix}ch:${name}`;
  }
}
