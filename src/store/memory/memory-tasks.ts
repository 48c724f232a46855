import {
  taskChannel,
  type EventBus,
  type Lease,
  type NewTask,
  type Orphan,
  type OrphanEnd,
  type OrphanStore,
  type TaskChange,
  type TaskRecord,
  type TaskView,
  type TaskFilter,
  type TaskStore,
  type TransitionResult,
} from "../contract.js";
import { filterPage } from "../task-filter.js";
import { answerField, changeFields, decodeTask, EXPIRES_AT, encodeAnswer, encodeOutcome, expiresAt, inputRequestField, newTaskFields } from "../task-fields.js";
import { assertChange, assertPrincipal, assertToken, isTerminal, refuseChange, taskExistsError, visibleTo } from "../task-rules.js";

interface Entry {
  fields: Map<string, string>;
  outcome?: string;
  /** The token of the replica lease the task is held under. */
  lease: string;
  expiresAt: number;
}

/**
 * Tasks in this process, with the Redis store's semantics: the same flat fields, the same checks
 * (task-rules.ts), every change a copy and a hint on the bus. Single-threaded JavaScript makes
 * each method atomic as long as it does not await in the middle — none does before writing.
 */
export class MemoryTasks implements TaskStore, OrphanStore {
  private readonly tasks = new Map<string, Entry>();
  private readonly locks = new Map<string, { holder: string; expiresAt: number }>();
  /** Replica leases: token → when it lapses (as the sorted set of replica-lease-1). */
  private readonly leases = new Map<string, number>();
  /** Tasks flagged for their owner. */
  private readonly flagged = new Map<string, Set<string>>();

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number,
  ) {}

  async createTask(task: NewTask, lease: Lease): Promise<TaskRecord> {
    assertToken(lease.token);
    if (this.live(task.id)) throw taskExistsError(task.id);
    const entry: Entry = { fields: new Map(newTaskFields(task)), lease: lease.token, expiresAt: expiresAt(task) };
    this.tasks.set(task.id, entry);
    return this.announce(task.id, entry);
  }

  /** The whole record is a view; its outcome is kept with it whether asked for or not. */
  async viewTask(id: string, principal: string | null, _withOutcome: boolean): Promise<TaskView | undefined> {
    return this.getTask(id, principal);
  }

  async getTask(id: string, principal: string | null): Promise<TaskRecord | undefined> {
    assertPrincipal(principal);
    const entry = this.live(id);
    if (!entry) return undefined;
    const task = decodeTask(entry.fields, entry.outcome);
    return visibleTo(task, principal) ? task : undefined;
  }

  async transitionTask(id: string, change: TaskChange): Promise<TransitionResult> {
    assertChange(change);
    const entry = this.live(id);
    const current = entry ? decodeTask(entry.fields, entry.outcome) : undefined;
    const refusal = refuseChange(current, entry?.lease, change);
    if (refusal === "not_found" || !entry || !current) return { ok: false, reason: "not_found" };
    if (refusal) return { ok: false, reason: refusal, task: current };
    const { set, del } = changeFields(change);
    for (const field of del) entry.fields.delete(field);
    for (const [field, value] of set) entry.fields.set(field, value);
    if (change.kind === "withdraw-input") this.backToWorking(entry);
    const ttlMs = "ttlMs" in change ? change.ttlMs : undefined;
    if (ttlMs !== undefined && ttlMs < current.ttlMs) this.shorten(entry, current.createdAt, ttlMs);
    if ("outcome" in change && change.outcome) entry.outcome = encodeOutcome(change.outcome);
    return { ok: true, task: this.bump(id, entry, change.now) };
  }

  async transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>): Promise<(TransitionResult | Error)[]> {
    return Promise.all(
      changes.map(({ id, change }) => this.transitionTask(id, change).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))),
    );
  }

  async addInputResponses(id: string, principal: string, responses: Record<string, unknown>, now: number) {
    assertPrincipal(principal);
    const entry = this.live(id);
    if (!entry || entry.fields.get("principal") !== principal) return undefined;
    // A terminal task never changes, so it accepts no answer (as add-input-responses-2).
    const open = !isTerminal(decodeTask(entry.fields, entry.outcome).status);
    const accepted = Object.keys(responses).filter((key) => open && entry.fields.has(inputRequestField(key)) && !entry.fields.has(answerField(key)));
    for (const key of accepted) entry.fields.set(answerField(key), encodeAnswer(responses[key]));
    const task = accepted.length ? this.bump(id, entry, now) : decodeTask(entry.fields, entry.outcome);
    return { accepted, task };
  }

  async takeInputResponses(id: string, leaseToken: string, now: number, waitingFor: readonly string[] = []) {
    assertToken(leaseToken);
    const entry = this.live(id);
    if (!entry) return { ok: false as const, reason: "not_found" as const };
    if (entry.lease !== leaseToken) return { ok: false as const, reason: "stale_lease" as const };
    const responses: Record<string, unknown> = {};
    // As take-input-responses-3: taken answers are kept as took:<key>, returned again while waited for.
    for (const key of waitingFor) {
      const again = entry.fields.get(`took:${key}`);
      if (again !== undefined) responses[key] = JSON.parse(again) as unknown;
    }
    let moved = false;
    for (const [field, value] of [...entry.fields]) {
      if (!field.startsWith("ans:")) continue;
      const key = field.slice(4);
      responses[key] ??= JSON.parse(value) as unknown;
      entry.fields.set(`took:${key}`, value);
      entry.fields.delete(field);
      entry.fields.delete(inputRequestField(key));
      moved = true;
    }
    if (!moved) return { ok: true as const, responses, task: decodeTask(entry.fields, entry.outcome) };
    this.backToWorking(entry);
    return { ok: true as const, responses, task: this.bump(id, entry, now) };
  }

  /** As replica-lease-1: a lapsed lease never comes back. */
  renewReplicaLease(token: string, leaseMs: number, first = false): boolean {
    assertToken(token);
    const lapses = this.leases.get(token);
    if (first ? lapses !== undefined : lapses === undefined || lapses <= this.now()) return false;
    this.leases.set(token, this.now() + leaseMs);
    return true;
  }

  async missingTasks(ids: readonly string[]): Promise<string[]> {
    const found = await Promise.all(ids.map((id) => this.getTask(id, null)));
    return ids.filter((_, i) => found[i] === undefined);
  }

  hasReplicaLease(token: string): boolean {
    return this.leases.has(token);
  }

  endReplicaLease(token: string): void {
    if (this.leases.has(token)) this.leases.set(token, this.now());
  }

  flagForOwner(owner: string, taskId: string): void {
    const ids = this.flagged.get(owner) ?? new Set<string>();
    ids.add(taskId);
    this.flagged.set(owner, ids);
  }

  takeFlagged(owner: string, max: number): string[] {
    const ids = this.flagged.get(owner);
    if (!ids) return [];
    const taken = [...ids].slice(0, max);
    for (const id of taken) ids.delete(id);
    if (ids.size === 0) this.flagged.delete(owner);
    return taken;
  }

  async listTasks(principal: string, page: { cursor?: string; limit: number }) {
    const mine = [...this.tasks.keys()]
      .map((id) => this.live(id))
      .filter((e): e is Entry => !!e && e.fields.get("principal") === principal)
      .map((e) => decodeTask(e.fields, e.outcome))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const start = page.cursor === undefined ? 0 : mine.findIndex((t) => t.id === page.cursor) + 1;
    if (page.cursor !== undefined && start === 0) return undefined;
    const tasks = mine.slice(start, start + page.limit);
    const more = start + page.limit < mine.length;
    return more ? { tasks, nextCursor: tasks[tasks.length - 1]!.id } : { tasks };
  }

  /** Non-terminal tasks held under a lapsed lease; a lapsed lease holding nothing is forgotten once settled. */
  async findOrphans(limit: number, settleMs: number): Promise<Orphan[]> {
    const now = this.now();
    const lapsed = new Set([...this.leases].filter(([, lapses]) => lapses <= now).map(([token]) => token));
    const orphans: Orphan[] = [];
    const holding = new Set<string>();
    for (const id of [...this.tasks.keys()]) {
      const entry = this.live(id);
      if (!entry || !lapsed.has(entry.lease)) continue;
      const task = decodeTask(entry.fields, entry.outcome);
      if (isTerminal(task.status)) continue;
      holding.add(entry.lease);
      if (orphans.length < limit) orphans.push({ task, token: entry.lease });
    }
    for (const token of lapsed) if (!holding.has(token) && now - (this.leases.get(token) ?? now) > settleMs) this.leases.delete(token);
    return orphans;
  }

  /** As end-orphan-3: only a non-terminal task still held under the lapsed lease. */
  async reapTask(orphan: Orphan, end: OrphanEnd): Promise<TransitionResult> {
    return this.orphanChange(orphan, end.now, (entry) => {
      entry.fields.set("status", end.to);
      entry.fields.set("statusMessage", end.statusMessage);
      if (end.outcome) entry.outcome = encodeOutcome(end.outcome);
    });
  }

  /** As claim-orphan-3: held under the new lease, the next attempt, no outstanding input. */
  async claimTask(orphan: Orphan, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult> {
    assertToken(lease.token);
    return this.orphanChange(orphan, now, (entry) => {
      for (const field of [...entry.fields.keys()]) if (/^(in|ans):/.test(field)) entry.fields.delete(field);
      entry.fields.set("status", "working");
      entry.fields.set("owner", lease.owner);
      entry.fields.set("statusMessage", statusMessage);
      entry.fields.set("attempt", String(Number(entry.fields.get("attempt") ?? "0") + 1));
      entry.lease = lease.token;
    });
  }

  async acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const lock = this.locks.get(name);
    if (lock && lock.expiresAt > this.now() && lock.holder !== holder) return false;
    this.locks.set(name, { holder, expiresAt: this.now() + ttlMs });
    return true;
  }

  private orphanChange({ task: { id }, token }: Orphan, now: number, apply: (entry: Entry) => void): TransitionResult {
    const entry = this.live(id);
    if (!entry) return { ok: false, reason: "not_found" };
    const task = decodeTask(entry.fields, entry.outcome);
    if (isTerminal(task.status)) return { ok: false, reason: "wrong_status", task };
    if (entry.lease !== token) return { ok: false, reason: "stale_lease", task };
    apply(entry);
    return { ok: true, task: this.bump(id, entry, now) };
  }

  /** Newest first, as the Redis index orders tasks of equal TTL. */
  async listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    const ids = [...this.tasks.keys()]
      .map((id) => this.live(id))
      .filter((e): e is Entry => !!e)
      .map((e) => decodeTask(e.fields, e.outcome))
      .sort((a, b) => b.createdAt + b.ttlMs - (a.createdAt + a.ttlMs) || (a.id < b.id ? 1 : -1))
      .map((t) => t.id);
    const start = page.cursor === undefined ? 0 : ids.indexOf(page.cursor) + 1;
    if (page.cursor !== undefined && start === 0) return undefined;
    return filterPage(once(ids.slice(start)), (id) => this.getTask(id, null), filter, page.limit);
  }

  sweep(): void {
    for (const id of [...this.tasks.keys()]) this.live(id);
  }

  clear(): void {
    this.tasks.clear();
  }

  /** As the transition scripts' shorten(): a shorter life, counted from creation, for every key of the task. */
  private shorten(entry: Entry, createdAt: number, ttlMs: number): void {
    entry.expiresAt = expiresAt({ createdAt, ttlMs });
    entry.fields.set("ttlMs", String(ttlMs));
    entry.fields.set(EXPIRES_AT, String(entry.expiresAt));
  }

  private backToWorking(entry: Entry): void {
    const outstanding = [...entry.fields.keys()].some((f) => f.startsWith("in:"));
    if (!outstanding && entry.fields.get("status") === "input_required") entry.fields.set("status", "working");
  }

  private bump(id: string, entry: Entry, now: number): TaskRecord {
    entry.fields.set("revision", String(Number(entry.fields.get("revision")) + 1));
    entry.fields.set("lastUpdatedAt", String(now));
    return this.announce(id, entry);
  }

  private announce(id: string, entry: Entry): TaskRecord {
    const task = decodeTask(entry.fields, entry.outcome);
    // A hint only: the change is made whether or not anyone hears of it.
    this.bus.publish(taskChannel(id), String(task.revision)).catch(() => {});
    return task;
  }

  private live(id: string): Entry | undefined {
    const entry = this.tasks.get(id);
    if (entry && entry.expiresAt <= this.now()) {
      this.tasks.delete(id);
      return undefined;
    }
    return entry;
  }
}

async function* once(ids: string[]): AsyncIterable<string[]> {
  if (ids.length) yield ids;
}
