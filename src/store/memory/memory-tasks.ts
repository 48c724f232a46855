import {
  taskChannel,
  type EventBus,
  type Lease,
  type LeaseState,
  type NewTask,
  type OrphanEnd,
  type OrphanStore,
  type TaskChange,
  type TaskRecord,
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
  lease?: { token: string; expiresAt: number };
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

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number,
  ) {}

  async createTask(task: NewTask, lease: Lease): Promise<TaskRecord> {
    assertToken(lease.token);
    if (this.live(task.id)) throw taskExistsError(task.id);
    const entry: Entry = { fields: new Map(newTaskFields(task)), expiresAt: expiresAt(task) };
    entry.lease = { token: lease.token, expiresAt: this.now() + lease.leaseMs };
    this.tasks.set(task.id, entry);
    return this.announce(task.id, entry);
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
    const refusal = refuseChange(current, this.leaseHolder(entry), change);
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
    if (this.leaseHolder(entry) !== leaseToken) return { ok: false as const, reason: "stale_lease" as const };
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

  async renewLeases(leases: ReadonlyArray<{ taskId: string; token: string }>, leaseMs: number): Promise<LeaseState[]> {
    return leases.map(({ taskId, token }) => {
      const entry = this.live(taskId);
      const held = !!entry && this.leaseHolder(entry) === token;
      if (held && entry?.lease) entry.lease.expiresAt = this.now() + leaseMs;
      const fields = entry?.fields;
      const hasInputResponses = !!fields && [...fields.keys()].some((f) => f.startsWith("ans:"));
      return { taskId, held, cancelRequested: fields?.get("cancelRequested") === "1", hasInputResponses };
    });
  }

  async releaseLease(taskId: string, token: string): Promise<void> {
    const entry = this.tasks.get(taskId);
    if (entry?.lease?.token === token) entry.lease = undefined;
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

  async findOrphans(createdBefore: number, limit: number): Promise<TaskRecord[]> {
    return [...this.tasks.keys()]
      .map((id) => this.live(id))
      .filter((e): e is Entry => !!e && !this.leaseHolder(e) && Number(e.fields.get("createdAt")) < createdBefore)
      .map((e) => decodeTask(e.fields, e.outcome))
      .filter((t) => !isTerminal(t.status))
      .slice(0, limit);
  }

  /** As end-orphan-3: only a non-terminal task no lease holds. */
  async reapTask(id: string, end: OrphanEnd): Promise<TransitionResult> {
    return this.orphanChange(id, end.now, (entry) => {
      entry.fields.set("status", end.to);
      entry.fields.set("statusMessage", end.statusMessage);
      if (end.outcome) entry.outcome = encodeOutcome(end.outcome);
    });
  }

  /** As claim-orphan-3: a fresh lease, the next attempt, no outstanding input. */
  async claimTask(id: string, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult> {
    assertToken(lease.token);
    return this.orphanChange(id, now, (entry) => {
      for (const field of [...entry.fields.keys()]) if (/^(in|ans):/.test(field)) entry.fields.delete(field);
      entry.fields.set("status", "working");
      entry.fields.set("owner", lease.owner);
      entry.fields.set("statusMessage", statusMessage);
      entry.fields.set("attempt", String(Number(entry.fields.get("attempt") ?? "0") + 1));
      entry.lease = { token: lease.token, expiresAt: this.now() + lease.leaseMs };
    });
  }

  async acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const lock = this.locks.get(name);
    if (lock && lock.expiresAt > this.now() && lock.holder !== holder) return false;
    this.locks.set(name, { holder, expiresAt: this.now() + ttlMs });
    return true;
  }

  private orphanChange(id: string, now: number, apply: (entry: Entry) => void): TransitionResult {
    const entry = this.live(id);
    if (!entry) return { ok: false, reason: "not_found" };
    const task = decodeTask(entry.fields, entry.outcome);
    if (isTerminal(task.status)) return { ok: false, reason: "wrong_status", task };
    if (this.leaseHolder(entry)) return { ok: false, reason: "stale_lease", task };
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

  private leaseHolder(entry: Entry | undefined): string | undefined {
    if (!entry?.lease || entry.lease.expiresAt <= this.now()) return undefined;
    return entry.lease.token;
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
