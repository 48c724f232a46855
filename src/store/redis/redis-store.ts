import type { Logger } from "pino";
import type { Lease, NewTask, Orphan, OrphanEnd, SessionRecord, Store, TaskChange, TaskFilter } from "../contract.js";
import { decodeSession, encodeSession } from "../session-json.js";
import { assertTtlMs } from "../ttl.js";
import { RedisConnection, type RedisTarget } from "./connection.js";
import { RedisKeys } from "./keys.js";
import { allScripts } from "./lua/index.js";
import { admitTask } from "./lua/admit-task-1.js";
import { assertPrincipal } from "../task-rules.js";
import { RedisBus } from "./redis-bus.js";
import { RedisTasks } from "./redis-tasks.js";
import { ScriptRunner } from "./scripts.js";
import { RedisStoreFormat } from "./store-format.js";

export interface RedisStoreOptions {
  target: RedisTarget;
  keyPrefix: string;
  logger?: Logger;
  /** Longest any store call may take while Redis is away, before StoreUnavailableError. */
  callTimeoutMs?: number;
  /** Held-task entries the reaper reads per page of a lapsed lease (tests make it small). */
  orphanPageSize?: number;
}

/** The shared store: several replicas on one Redis (or Redis Cluster) see the same state. */
export class RedisStore implements Store {
  readonly kind = "redis" as const;
  readonly bus: RedisBus;
  readonly keys: RedisKeys;
  readonly scripts: ScriptRunner;
  readonly format: RedisStoreFormat;
  private readonly connection: RedisConnection;
  private readonly tasks: RedisTasks;

  constructor(opts: RedisStoreOptions) {
    const callTimeoutMs = opts.callTimeoutMs ?? 1_000;
    const connect = (name: string, autoPipelining = false) =>
      new RedisConnection({ target: opts.target, name, logger: opts.logger, callTimeoutMs, autoPipelining });
    this.keys = new RedisKeys(opts.keyPrefix);
    this.connection = connect("taskgate", true);
    this.scripts = new ScriptRunner(this.connection, allScripts);
    this.format = new RedisStoreFormat(this.connection, this.scripts, this.keys);
    this.tasks = new RedisTasks(this.connection, this.scripts, this.keys, opts.orphanPageSize);
    this.bus = new RedisBus({
      publisher: this.connection,
      openSubscriber: () => connect("taskgate:subscriber"),
      keys: this.keys,
      logger: opts.logger,
    });
  }

  async createSession(record: SessionRecord, ttlMs: number): Promise<void> {
    assertTtlMs(ttlMs);
    await this.connection.call((c) => c.set(this.keys.session(record.id), encodeSession(record), "PX", ttlMs));
  }

  /** GETEX (Redis ≥ 6.2) reads and pushes the expiry out in one round trip. */
  async getSession(id: string, ttlMs: number): Promise<SessionRecord | undefined> {
    assertTtlMs(ttlMs);
    const json = await this.connection.call((c) => c.getex(this.keys.session(id), "PX", ttlMs));
    return json === null ? undefined : decodeSession(json);
  }

  async hasSession(id: string): Promise<boolean> {
    return (await this.connection.call((c) => c.exists(this.keys.session(id)))) === 1;
  }

  async deleteSession(id: string): Promise<boolean> {
    return (await this.connection.call((c) => c.del(this.keys.session(id)))) === 1;
  }

  createTask(task: NewTask, lease: Lease) {
    return this.tasks.createTask(task, lease);
  }

  getTask(id: string, principal: string | null) {
    return this.tasks.getTask(id, principal);
  }

  viewTask(id: string, principal: string | null, withOutcome: boolean) {
    return this.tasks.viewTask(id, principal, withOutcome);
  }

  transitionTask(id: string, change: TaskChange) {
    return this.tasks.transitionTask(id, change);
  }

  addInputResponses(id: string, principal: string, responses: Record<string, unknown>, now: number) {
    return this.tasks.addInputResponses(id, principal, responses, now);
  }

  takeInputResponses(id: string, leaseToken: string, now: number, waitingFor?: readonly string[]) {
    return this.tasks.takeInputResponses(id, leaseToken, now, waitingFor);
  }

  transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>) {
    return this.tasks.transitionTasks(changes);
  }

  renewReplicaLease(token: string, leaseMs: number, first?: boolean) {
    return this.tasks.orphans.renewReplicaLease(token, leaseMs, first);
  }

  endReplicaLease(token: string) {
    return this.tasks.orphans.endReplicaLease(token);
  }

  flagForOwner(owner: string, taskId: string) {
    return this.tasks.held.flag(owner, taskId);
  }

  takeFlagged(owner: string, max: number) {
    return this.tasks.held.takeFlagged(owner, max);
  }

  listTasks(principal: string, page: { cursor?: string; limit: number }) {
    return this.tasks.listTasks(principal, page);
  }

  findOrphans(limit: number, settleMs: number) {
    return this.tasks.orphans.findOrphans(limit, settleMs);
  }

  reapTask(orphan: Orphan, end: OrphanEnd) {
    return this.tasks.orphans.reapTask(orphan, end);
  }

  claimTask(orphan: Orphan, lease: Lease, statusMessage: string, now: number) {
    return this.tasks.orphans.claimTask(orphan, lease, statusMessage, now);
  }

  acquireLock(name: string, holder: string, ttlMs: number) {
    return this.tasks.orphans.acquireLock(name, holder, ttlMs);
  }

  listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    return this.tasks.listAllTasks(filter, page);
  }

  async admitTask(principal: string, taskId: string, limit: number, until: number, now: number): Promise<boolean> {
    assertPrincipal(principal);
    return (await this.scripts.run(admitTask, [this.keys.principalQuota(principal)], [taskId, limit, until, now])) === 1;
  }

  async releaseTask(principal: string, taskId: string): Promise<void> {
    await this.connection.call((c) => c.zrem(this.keys.principalQuota(principal), taskId));
  }

  async ping(timeoutMs?: number): Promise<void> {
    await this.connection.call((c) => c.ping(), timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.bus.close(), this.connection.close()]);
  }
}
