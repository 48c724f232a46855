import type { Lease, NewTask, TaskChange, TaskFilter, TaskRecord, TaskStore, TaskView, TransitionResult } from "../contract.js";
import { isTerminal } from "../task-rules.js";
import { decodeTask, decodeTaskView, encodeAnswer, expiresAt, newTaskFields } from "../task-fields.js";
import { assertChange, assertPrincipal, assertToken, taskExistsError, TRANSITION_RULES } from "../task-rules.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { addInputResponses } from "./lua/add-input-responses-2.js";
import { createTask } from "./lua/create-task-2.js";
import { getTask } from "./lua/get-task-2.js";
import { viewTask } from "./lua/view-task-2.js";
import { takeInputResponses } from "./lua/take-input-responses-3.js";
import type { ScriptRunner } from "./scripts.js";
import type { DurableWrites } from "./durable-writes.js";
import type { Logger } from "pino";
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

/**
 * Every change but progress is confirmed by the replicas before it is answered: those a caller is
 * told were made (a cancel, an outcome, a detach that hands out the task), and those a call's
 * progress depends on (a question the client must see to answer it, what another replica needs to
 * take the call over). A progress message lost to a failover is repeated by the next one.
 */
const ACKNOWLEDGED: ReadonlySet<TaskChange["kind"]> = new Set(
  (Object.keys(TRANSITION_RULES) as TaskChange["kind"][]).filter((kind) => kind !== "set-status-message"),
);

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
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
    private readonly durable: DurableWrites,
    private readonly logger?: Logger,
    orphanPageSize?: number,
  ) {
    this.index = new RedisTaskIndex(connection, keys);
    this.held = new HeldIndex(connection, keys, durable);
    this.orphans = new RedisOrphans(scripts, keys, this.held, (id) => this.getTask(id, null), durable, orphanPageSize);
  }

  /**
   * Listed under the lease token first (the reaper must be able to find every task that exists),
   * then the task: durable once the script answers and its replicas have it (durable-writes.ts).
   * The list indexes follow, each in a slot of its own: a failure there is logged and does not
   * fail a task that exists (it is missing from tasks/list and the admin listing only).
   */
  async createTask(task: NewTask, lease: Lease): Promise<TaskRecord> {
    assertToken(lease.token);
    await this.held.add(lease.token, task.id, expiresAt(task));
    const k = this.keys.taskKeys(task.id);
    const pairs = newTaskFields(task);
    const args = [lease.token, expiresAt(task), this.keys.taskChannel(task.id), ...pairs.flat()];
    const reply = await this.durable.run({ script: createTask, keys: [k.hash, k.lease], args });
    if (readCode(createTask.name, reply, ["ok", "exists"]) === "exists") throw taskExistsError(task.id);
    await this.index.add(task).catch((err: unknown) => {
      this.indexWritesLost++;
      this.logger?.warn({ err, taskId: task.id }, "task created, but not listed for tasks/list and the admin listing: the index write failed");
    });
    return decodeTask(new Map(pairs), null);
  }

  /** Index writes a created task missed (createTask), for the store's metrics. */
  indexWritesLost = 0;

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
    const keys = [k.hash, k.outcome, k.lease];
    const reply = ACKNOWLEDGED.has(change.kind) ? await this.durable.run({ script, keys, args }) : await this.scripts.run(script, keys, args);
    return this.owned(id, change, transitionResult(reply, script.name));
  }

  /** One pipeline (in a cluster, one per node): the outcome writes of calls that end together. */
  async transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>): Promise<(TransitionResult | Error)[]> {
    const calls = changes.map(({ id, change }) => {
      assertChange(change);
      const k = this.keys.taskKeys(id);
      return { ...transitionCall(this.keys, id, change), keys: [k.hash, k.outcome, k.lease] };
    });
    const replies = await this.durable.runBatch(calls, (_, i) => ACKNOWLEDGED.has(changes[i]!.change.kind));
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
    const reply = await this.durable.run({ script: addInputResponses, keys: [k.hash, k.outcome], args: [principal, now, this.keys.taskChannel(id), ...pairs] });
    if (readCode(addInputResponses.name, reply, ["ok", "not_found"]) === "not_found") return undefined;
    const [, accepted, fields, outcome] = array(reply);
    return { accepted: array(accepted) as string[], task: taskOf(fields, outcome) };
  }

  async takeInputResponses(id: string, leaseToken: string, now: number, waitingFor: readonly string[] = []) {
    assertToken(leaseToken);
    const k = this.keys.taskKeys(id);
    const reply = await this.durable.run({
      script: takeInputResponses,
      keys: [k.hash, k.outcome, k.lease],
      args: [leaseToken, now, this.keys.taskChannel(id), ...waitingFor],
    });
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

  async missingTasks(ids: readonly string[]): Promise<string[]> {
    const found = await Promise.all(ids.map((id) => this.connection.command((c) => c.exists(this.keys.task(id)))));
    return ids.filter((_, i) => found[i] === 0);
  }

  listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }) {
    return this.index.all.list(filter, page, (id) => this.getTask(id, null));
  }

  listTasks(principal: string, page: { cursor?: string; limit: number }) {
    return this.index.list(principal, page, (id, p) => this.getTask(id, p));
  }
}
