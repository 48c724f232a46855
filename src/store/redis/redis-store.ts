import { Cluster } from "ioredis";
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
import { DurableWrites } from "./durable-writes.js";
import { ReplicaTopology, type WaitForReplicas } from "./replicas.js";
import { AofConfirmation, type Confirmation, type WaitForAof } from "./aof-confirm.js";

export interface RedisStoreOptions {
  target: RedisTarget;
  keyPrefix: string;
  logger?: Logger;
  /** Longest any store call may take while Redis is away, before StoreUnavailableError. */
  callTimeoutMs?: number;
  /** Held-task entries the reaper reads per page of a lapsed lease (tests make it small). */
  orphanPageSize?: number;
  /** store.waitForReplicas (default "listed"). */
  waitForReplicas?: WaitForReplicas;
  /** store.waitTimeoutMs (default 1000). */
  waitTimeoutMs?: number;
  /** store.waitForAof (default "auto"). */
  waitForAof?: WaitForAof;
}

/** The shared store: several replicas on one Redis (or Redis Cluster) see the same state. */
export class RedisStore implements Store {
  readonly kind = "redis" as const;
  readonly bus: RedisBus;
  readonly keys: RedisKeys;
  readonly scripts: ScriptRunner;
  readonly format: RedisStoreFormat;
  readonly topology: ReplicaTopology;
  private readonly connection: RedisConnection;
  private readonly durableConnection: RedisConnection;
  private readonly tasks: RedisTasks;

  get sharded(): boolean {
    return this.connection.isCluster;
  }

  /**
   * Per primary ("host:port" in a Cluster, "" for the one primary), whether its acknowledged
   * writes are confirmed by WAIT alone or by WAIT and WAITAOF, and why; logged as it changes.
   */
  confirmations(): Map<string, Confirmation> {
    return this.topology.aof?.confirmations() ?? new Map();
  }

  constructor(opts: RedisStoreOptions) {
    const callTimeoutMs = opts.callTimeoutMs ?? 1_000;
    const waitTimeoutMs = opts.waitTimeoutMs ?? 1_000;
    const connect = (name: string, autoPipelining = false, commandTimeoutMs = callTimeoutMs) =>
      new RedisConnection({ target: opts.target, name, logger: opts.logger, callTimeoutMs, commandTimeoutMs, autoPipelining });
    this.keys = new RedisKeys(opts.keyPrefix);
    this.connection = connect("taskgate", true);
    this.scripts = new ScriptRunner(this.connection, allScripts);
    this.format = new RedisStoreFormat(this.connection, this.scripts, this.keys);
    // Acknowledged writes and their WAIT on a connection of their own (durable-writes.ts).
    this.durableConnection = connect("taskgate:durable", false, callTimeoutMs + 2 * waitTimeoutMs);
    const aof = new AofConfirmation(this.connection, opts.waitForAof ?? "auto", opts.logger);
    this.topology = new ReplicaTopology(this.connection, opts.target, opts.waitForReplicas ?? "listed", opts.logger, aof);
    const durable = new DurableWrites(
      this.scripts,
      this.durableConnection,
      new ScriptRunner(this.durableConnection, allScripts),
      this.topology,
      waitTimeoutMs,
      callTimeoutMs,
      aof,
    );
    this.tasks = new RedisTasks(this.connection, this.scripts, this.keys, durable, opts.logger, opts.orphanPageSize);
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

  async hasReplicaLease(token: string): Promise<boolean> {
    return (await this.connection.call((c) => c.zscore(this.keys.leases(), token))) !== null;
  }

  missingTasks(ids: readonly string[]) {
    return this.tasks.missingTasks(ids);
  }

  /** maxmemory-policy of every primary: taskgate needs noeviction (docs/guides/replicas-redis.md). */
  async configurationWarnings(): Promise<string[]> {
    const client = this.connection.client;
    const primaries = client instanceof Cluster ? client.nodes("master") : [client];
    const found = await Promise.all(
      primaries.map(async (node) => {
        const info = await this.connection.call(() => node.info("memory")).catch(() => "");
        const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
        const at = `${node.options.host}:${node.options.port}`;
        return policy === undefined || policy === "noeviction"
          ? []
          : [
              `Redis at ${at} has maxmemory-policy ${policy}: under memory pressure it may evict task records (every one has a TTL, so volatile-* policies evict them too). Set maxmemory-policy noeviction: writes are then refused, and say so, instead of tasks disappearing.`,
            ];
      }),
    );
    return found.flat();
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
    this.topology.close();
    await Promise.all([this.bus.close(), this.connection.close(), this.durableConnection.close()]);
  }
}
