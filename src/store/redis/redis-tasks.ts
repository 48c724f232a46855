import type { Redis } from "ioredis";
import {
  type Lease,
  type LeaseState,
  type NewTask,
  type TaskChange,
  type TaskRecord,
  type TaskStore,
  type TransitionResult,
} from "../contract.js";
import { changeFields, decodeTask, encodeAnswer, encodeOutcome, expiresAt, inputRequestField, newTaskFields } from "../task-fields.js";
import { assertChange, taskExistsError, visibleTo } from "../task-rules.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { addInputResponses } from "./lua/add-input-responses-2.js";
import { createTask } from "./lua/create-task-3.js";
import { releaseLease, renewLease } from "./lua/renew-lease-2.js";
import { takeInputResponses } from "./lua/take-input-responses-3.js";
import { transitionTask } from "./lua/transition-task-3.js";
import type { ScriptRunner } from "./scripts.js";

type Reply = [number, ...unknown[]];
type ScriptCall = (...args: (string | number)[]) => unknown;

/** Tasks in Redis: every change one Lua script (lua/), every read one round trip. */
export class RedisTasks implements TaskStore {
  constructor(
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
  ) {}

  async createTask(task: NewTask, lease: Lease): Promise<TaskRecord> {
    const k = this.keys.taskKeys(task.id);
    const pairs = newTaskFields(task);
    const args = [lease.token, lease.leaseMs, expiresAt(task), this.channel(task.id), ...pairs.flat()];
    const created = await this.scripts.run(createTask, [k.hash, k.outcome, k.lease], args);
    if (created === -1) throw taskExistsError(task.id);
    await this.index(task);
    return decodeTask(new Map(pairs), null);
  }

  /** One round trip: the hash and the outcome in one pipeline. */
  async getTask(id: string, principal: string | null): Promise<TaskRecord | undefined> {
    const k = this.keys.taskKeys(id);
    const [fields, outcome] = await this.connection.call(async (c) => {
      const res = await c.pipeline().hgetall(k.hash).get(k.outcome).exec();
      return [res?.[0]?.[1] as Record<string, string>, res?.[1]?.[1] as string | null];
    });
    if (!fields || Object.keys(fields).length === 0) return undefined;
    const task = decodeTask(new Map(Object.entries(fields)), outcome);
    return visibleTo(task, principal) ? task : undefined;
  }

  async transitionTask(id: string, change: TaskChange): Promise<TransitionResult> {
    assertChange(change);
    const k = this.keys.taskKeys(id);
    const { set, del } = changeFields(change);
    const removed = (change.removeInputRequests ?? []).map(inputRequestField);
    const args = [
      change.from.join(","), change.principal ?? "", change.leaseToken ?? "", change.now,
      change.outcome ? encodeOutcome(change.outcome) : "", this.channel(id), set.length, removed.length ? "1" : "0",
      ...set.flat(), ...del, ...removed,
    ];
    const [code, fields, outcome] = (await this.scripts.run(transitionTask, [k.hash, k.outcome, k.lease], args)) as Reply;
    if (code === -1) return { ok: false, reason: "not_found" };
    const task = decodeReply(fields, outcome);
    if (code === -2) return { ok: false, reason: "wrong_status", task };
    if (code === -3) return { ok: false, reason: "stale_lease", task };
    return { ok: true, task };
  }

  async addInputResponses(id: string, principal: string, responses: Record<string, unknown>, now: number) {
    const k = this.keys.taskKeys(id);
    const pairs = Object.entries(responses).flatMap(([key, value]) => [key, encodeAnswer(value)]);
    const reply = (await this.scripts.run(addInputResponses, [k.hash, k.outcome], [principal, now, this.channel(id), ...pairs])) as Reply;
    if (reply[0] === -1) return undefined;
    return { accepted: reply[1] as string[], task: decodeReply(reply[2], reply[3]) };
  }

  async takeInputResponses(id: string, leaseToken: string, now: number) {
    const k = this.keys.taskKeys(id);
    const reply = (await this.scripts.run(takeInputResponses, [k.hash, k.outcome, k.lease], [leaseToken, now, this.channel(id)])) as Reply;
    if (reply[0] === -1) return { ok: false as const, reason: "not_found" as const };
    if (reply[0] === -3) return { ok: false as const, reason: "stale_lease" as const };
    const flat = reply[1] as string[];
    const responses: Record<string, unknown> = {};
    for (let i = 0; i < flat.length; i += 2) responses[flat[i]!] = JSON.parse(flat[i + 1]!) as unknown;
    return { ok: true as const, responses, task: decodeReply(reply[2], reply[3]) };
  }

  /** Every lease in ONE round trip: a pipeline of renew-lease scripts. */
  async renewLeases(leases: ReadonlyArray<{ taskId: string; token: string }>, leaseMs: number): Promise<LeaseState[]> {
    if (leases.length === 0) return [];
    const results = await this.connection.call(async (c) => {
      const pipeline = c.pipeline() as unknown as Record<string, ScriptCall> & { exec(): Promise<[Error | null, unknown][] | null> };
      for (const { taskId, token } of leases) {
        const k = this.keys.taskKeys(taskId);
        pipeline[renewLease.name]!.call(pipeline, k.hash, k.lease, token, leaseMs);
      }
      return pipeline.exec();
    });
    return leases.map(({ taskId }, i) => {
      const [err, value] = results?.[i] ?? [new Error("no reply"), undefined];
      if (err) throw err;
      const [held, cancel, answers] = value as number[];
      return { taskId, held: held === 1, cancelRequested: cancel === 1, hasInputResponses: answers === 1 };
    });
  }

  async releaseLease(taskId: string, token: string): Promise<void> {
    await this.scripts.run(releaseLease, [this.keys.taskKeys(taskId).lease], [token]);
  }

  /** Newest first from the principal's index; ids whose task expired are dropped on the way. */
  async listTasks(principal: string, page: { cursor?: string; limit: number }) {
    const index = this.keys.principalTasks(principal);
    const start = await this.startOf(index, page.cursor);
    if (start === undefined) return undefined;
    const ids = await this.connection.call((c) => c.zrevrange(index, start, start + page.limit));
    const found = await Promise.all(ids.slice(0, page.limit).map((id) => this.getTask(id, principal)));
    const gone = ids.filter((_, i) => i < page.limit && !found[i]);
    if (gone.length) await this.connection.call((c) => c.zrem(index, ...gone));
    const tasks = found.filter((t): t is TaskRecord => !!t);
    const more = ids.length > page.limit;
    return more ? { tasks, nextCursor: ids[page.limit - 1]! } : { tasks };
  }

  private async startOf(index: string, cursor: string | undefined): Promise<number | undefined> {
    if (cursor === undefined) return 0;
    const rank = await this.connection.call((c) => c.zrevrank(index, cursor));
    return rank === null ? undefined : rank + 1;
  }

  /**
   * The principal's index lives in its own slot (another hash tag), so it is written beside the
   * script, not inside it; a task missing from it can only be one that expired.
   */
  private async index(task: NewTask): Promise<void> {
    const index = this.keys.principalTasks(task.principal);
    const until = expiresAt(task);
    await this.connection.call((c: Redis) =>
      c.pipeline().zadd(index, task.createdAt, task.id).pexpireat(index, until, "NX").pexpireat(index, until, "GT").exec(),
    );
  }

  private channel(id: string): string {
    return this.keys.taskChannel(id);
  }
}

function decodeReply(fields: unknown, outcome: unknown): TaskRecord {
  const flat = fields as string[];
  const map = new Map<string, string>();
  for (let i = 0; i < flat.length; i += 2) map.set(flat[i]!, flat[i + 1]!);
  return decodeTask(map, outcome === "" ? null : (outcome as string));
}


