import type { Logger } from "pino";
import {
  StoreUnavailableError,
  type Lease,
  type NewTask,
  type Orphan,
  type OrphanEnd,
  type SessionRecord,
  type Store,
  type TaskChange,
  type TaskFilter,
} from "../contract.js";
import { decodeSession, encodeSession } from "../session-json.js";
import { assertTtlMs } from "../ttl.js";
import { MemoryBus } from "./memory-bus.js";
import { MemoryQuota } from "./memory-quota.js";
import { MemoryTasks } from "./memory-tasks.js";

export interface MemoryStoreOptions {
  logger?: Logger;
  /** Injected for tests; milliseconds since the epoch. */
  now?: () => number;
  /** How often expired entries are dropped; reads also expire lazily. */
  sweepIntervalMs?: number;
}

interface Entry {
  json: string;
  expiresAt: number;
}

/** The embedded store: everything lives in this process and is lost when it exits. */
export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  readonly sharded = false;
  readonly bus: MemoryBus;
  private readonly sessions = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweepTimer: NodeJS.Timeout;
  private closed = false;
  private readonly tasks: MemoryTasks;
  private readonly quota = new MemoryQuota();

  constructor(opts: MemoryStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.bus = new MemoryBus((err) => opts.logger?.error({ err }, "event bus handler threw"));
    this.tasks = new MemoryTasks(this.bus, this.now);
    this.sweepTimer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 60_000);
    // The sweep only frees memory; it must never keep the process alive.
    this.sweepTimer.unref();
  }

  async createSession(record: SessionRecord, ttlMs: number): Promise<void> {
    this.assertOpen();
    assertTtlMs(ttlMs);
    this.sessions.set(record.id, { json: encodeSession(record), expiresAt: this.now() + ttlMs });
  }

  async getSession(id: string, ttlMs: number): Promise<SessionRecord | undefined> {
    this.assertOpen();
    assertTtlMs(ttlMs);
    const entry = this.live(id);
    if (!entry) return undefined;
    entry.expiresAt = this.now() + ttlMs;
    return decodeSession(entry.json);
  }

  async hasSession(id: string): Promise<boolean> {
    this.assertOpen();
    return this.live(id) !== undefined;
  }

  async deleteSession(id: string): Promise<boolean> {
    this.assertOpen();
    const existed = this.live(id) !== undefined;
    this.sessions.delete(id);
    return existed;
  }

  async createTask(task: NewTask, lease: Lease) {
    this.assertOpen();
    return this.tasks.createTask(task, lease);
  }

  async getTask(id: string, principal: string | null) {
    this.assertOpen();
    return this.tasks.getTask(id, principal);
  }

  async viewTask(id: string, principal: string | null, withOutcome: boolean) {
    this.assertOpen();
    return this.tasks.viewTask(id, principal, withOutcome);
  }

  async transitionTask(id: string, change: TaskChange) {
    this.assertOpen();
    return this.tasks.transitionTask(id, change);
  }

  async addInputResponses(id: string, principal: string, responses: Record<string, unknown>, now: number) {
    this.assertOpen();
    return this.tasks.addInputResponses(id, principal, responses, now);
  }

  async takeInputResponses(id: string, leaseToken: string, now: number, waitingFor?: readonly string[]) {
    this.assertOpen();
    return this.tasks.takeInputResponses(id, leaseToken, now, waitingFor);
  }

  async transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>) {
    this.assertOpen();
    return this.tasks.transitionTasks(changes);
  }

  async renewReplicaLease(token: string, leaseMs: number, first?: boolean) {
    this.assertOpen();
    return this.tasks.renewReplicaLease(token, leaseMs, first);
  }

  async hasReplicaLease(token: string) {
    this.assertOpen();
    return this.tasks.hasReplicaLease(token);
  }

  async missingTasks(ids: readonly string[]) {
    this.assertOpen();
    return this.tasks.missingTasks(ids);
  }

  async configurationWarnings(): Promise<string[]> {
    return [];
  }

  async endReplicaLease(token: string) {
    this.assertOpen();
    this.tasks.endReplicaLease(token);
  }

  async flagForOwner(owner: string, taskId: string) {
    this.assertOpen();
    this.tasks.flagForOwner(owner, taskId);
  }

  async takeFlagged(owner: string, max: number) {
    this.assertOpen();
    return this.tasks.takeFlagged(owner, max);
  }

  async listTasks(principal: string, page: { cursor?: string; limit: number }) {
    this.assertOpen();
    return this.tasks.listTasks(principal, page);
  }

  async findOrphans(limit: number, settleMs: number) {
    this.assertOpen();
    return this.tasks.findOrphans(limit, settleMs);
  }

  async reapTask(orphan: Orphan, end: OrphanEnd) {
    this.assertOpen();
    return this.tasks.reapTask(orphan, end);
  }

  async claimTask(orphan: Orphan, lease: Lease, statusMessage: string, now: number) {
    this.assertOpen();
    return this.tasks.claimTask(orphan, lease, statusMessage, now);
  }

  async acquireLock(name: string, holder: string, ttlMs: number) {
    this.assertOpen();
    return this.tasks.acquireLock(name, holder, ttlMs);
  }

  async listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    this.assertOpen();
    return this.tasks.listAllTasks(filter, page);
  }

  async admitTask(principal: string, taskId: string, limit: number, until: number, now: number): Promise<boolean> {
    this.assertOpen();
    return this.quota.admit(principal, taskId, limit, until, now);
  }

  async releaseTask(principal: string, taskId: string): Promise<void> {
    this.assertOpen();
    this.quota.release(principal, taskId);
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.sessions.clear();
    this.tasks.clear();
    this.bus.close();
  }

  /** The entry if it has not expired; an expired one is dropped on the way. */
  private live(id: string): Entry | undefined {
    const entry = this.sessions.get(id);
    if (entry && entry.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.sessions) if (entry.expiresAt <= now) this.sessions.delete(id);
    this.tasks.sweep();
  }

  /** Same as Redis after `quit`: a closed store is an unavailable one. */
  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError(new Error("store closed"));
  }
}
