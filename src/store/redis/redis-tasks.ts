import type { Lease, NewTask, TaskChange, TaskFilter, TaskRecord, TaskStore, TaskView, TransitionResult } from "../contract.js";
import { isTerminal } from "../task-rules.js";
import { decodeTask, decodeTaskView, encodeAnswer, expiresAt, newTaskFields } from "../task-fields.js";
import { assertChange, assertPrincipal, assertToken, taskExistsError } from "../task-rules.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { addInputResponses } from "./lua/add-input-responses-2.js";
import { createTask } from "./lua/create-task-2.js";
import { getTask } from "./lua/get-task-2.js";
import { viewTask } from "./lua/view-task-2.js";
import { takeInputResponses } from "./lua/take-input-responses-3.js";
import type { ScriptRunner } from "./scripts.js";
import { HeldIndex } from "./held-index.js";
import { RedisOrphans } from "./redis-orphans.js";
import { RedisTaskIndex } from "./task-index.js";
import { transitionCall } from "./task-changes.js";
import { answersOf, array, readCode, strings, taskOf, transitionResult } from "./task-replies.js";

/** view-task-2's reply: the view, or undefined when the task is missing or another principal's. */
function readView(reply: unknown): TaskView | undefined {
  if (readCode(viewTask.name, reply, ["ok", "not_found"]) === "not_found") return undefined;
  const [, values, inputs, outcome] = array(reply);
  return decodeTaskView(array(values), strings(inputs), typeof outcome === "string" && outcome !== "" ? outcome : null);
}

/** get-task-2's reply: the task, or undefined when it is missing or another principal's. */
function readTask(reply: unknown): TaskRecord | undefined {
  if (readCode(getTask.name, reply, ["ok", "not_found"]) === "not_found") return undefined;
  const [, pairs, outcome] = array(reply);
  return taskOf(pairs, outcome);
}

/** Tasks in Redis: every change one Lua script (lua/), every read one round trip. */
export class RedisTasks implements TaskStore {
  private readonly index: RedisTaskIndex;
  readonly held: HeldIndex;
  readonly orphans: RedisOrphans;

  constructor(
    connection: RedisConnection,
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
    orphanPageSize?: number,
  ) {
    this.index = new RedisTaskIndex(connection, keys);
    this.held = new HeldIndex(connection, keys);
    this.orphans = new RedisOrphans(scripts, keys, this.held, (id) => this.getTask(id, null), orphanPageSize);
  }

  /**
   * Listed under the lease token first (the reaper must be able to find every task that exists),
   * then the task: durable once the script answers. The list index follows (tasks/list only).
   */
  async createTask(task: NewTask, lease: Lease): Promise<TaskRecord> {
    assertToken(lease.token);
    await this.held.add(lease.token, task.id, expiresAt(task));
    const k = this.keys.taskKeys(task.id);
    const pairs = newTaskFields(task);
    const args = [lease.token, expiresAt(task), this.keys.taskChannel(task.id), ...pairs.flat()];
    const reply = await this.scripts.run(createTask, [k.hash, k.lease], args);
    if (readCode(createTask.name, reply, ["ok", "exists"]) === "exists") throw taskExistsError(task.id);
    await this.index.add(task);
    return decodeTask(new Map(pairs), null);
  }

  /** Not an async function: every poll comes through here, and each async layer is one more promise. */
  getTask(id: string, principal: string | null): Promise<TaskRecord | undefined> {
    try {
      assertPrincipal(principal);
    } catch (err) {
      return Promise.reject(err);
    }
    const k = this.keys.taskKeys(id);
    return this.scripts.run(getTask, [k.hash, k.outcome], [principal ?? ""]).then(readTask);
  }

  viewTask(id: string, principal: string | null, withOutcome: boolean): Promise<TaskView | undefined> {
    try {
      assertPrincipal(principal);
    } catch (err) {
      return Promise.reject(err);
    }
    const k = this.keys.taskKeys(id);
    return this.scripts.run(viewTask, [k.hash, k.outcome], [principal ?? "", withOutcome ? "1" : "0"]).then(readView);
  }

  /** The named transition's own script (lua/transitions.ts), which checks whether it may run. */
  async transitionTask(id: string, change: TaskChange): Promise<TransitionResult> {
    assertChange(change);
    const k = this.keys.taskKeys(id);
    const { script, args } = transitionCall(this.keys, id, change);
    return this.owned(id, change, transitionResult(await this.scripts.run(script, [k.hash, k.outcome, k.lease], args), script.name));
  }

  /** One pipeline (in a cluster, one per node): the outcome writes of calls that end together. */
  async transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>): Promise<(TransitionResult | Error)[]> {
    const calls = changes.map(({ id, change }) => {
      assertChange(change);
      const k = this.keys.taskKeys(id);
      return { ...transitionCall(this.keys, id, change), keys: [k.hash, k.outcome, k.lease] };
    });
    const replies = await this.scripts.runBatch(calls);
    return replies.map((reply, i) => {
      if (reply instanceof Error) return reply;
      const { id, change } = changes[i]!;
      try {
        return this.owned(id, change, transitionResult(reply, calls[i]!.script.name));
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    });
  }

  async addInputResponses(id: string, principal: string, responses: Record<string, unknown>, now: number) {
    assertPrincipal(principal);
    const k = this.keys.taskKeys(id);
    const pairs = Object.entries(responses).flatMap(([key, value]) => [key, encodeAnswer(value)]);
    const reply = await this.scripts.run(addInputResponses, [k.hash, k.outcome], [principal, now, this.keys.taskChannel(id), ...pairs]);
    if (readCode(addInputResponses.name, reply, ["ok", "not_found"]) === "not_found") return undefined;
    const [, accepted, fields, outcome] = array(reply);
    return { accepted: array(accepted) as string[], task: taskOf(fields, outcome) };
  }

  async takeInputResponses(id: string, leaseToken: string, now: number, waitingFor: readonly string[] = []) {
    assertToken(leaseToken);
    const k = this.keys.taskKeys(id);
    const reply = await this.scripts.run(takeInputResponses, [k.hash, k.outcome, k.lease], [leaseToken, now, this.keys.taskChannel(id), ...waitingFor]);
    const read = readCode(takeInputResponses.name, reply, ["ok", "not_found", "stale_lease"]);
    if (read !== "ok") return { ok: false as const, reason: read as "not_found" | "stale_lease" };
    const [, taken, fields, outcome] = array(reply);
    return { ok: true as const, responses: answersOf(taken), task: taskOf(fields, outcome) };
  }

  /**
   * An owner's write that finds its task ended, gone or held under another lease: the task leaves
   * the set of the writer's lease token.
   */
  private owned(id: string, change: TaskChange, result: TransitionResult): TransitionResult {
    const token = change.leaseToken;
    if (token === undefined) return result;
    const stillMine = (result.ok || result.reason === "wrong_status") && !isTerminal(result.task.status);
    if (!stillMine) this.held.forget(token, id);
    return result;
  }

  listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    return this.index.all.list(filter, page, (id) => this.getTask(id, null));
  }

  listTasks(principal: string, page: { cursor?: string; limit: number }) {
    return this.index.list(principal, page, (id, p) => this.getTask(id, p));
  }
}
