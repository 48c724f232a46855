import type { Audit } from "../observability/audit.js";
import { refusedByShard, type TaskQuota } from "../store/contract.js";
import { newTaskId } from "./task-id.js";
import type { TaskCall } from "./types.js";

/** A call that has its task id and counts against its principal's limit until released. */
export type AdmittedCall = TaskCall & { taskId: string };

/** The principal holds limits.maxActiveTasksPerPrincipal non-terminal tasks already. */
export class TaskLimitError extends Error {
  constructor(readonly limit: number) {
    super(`this caller holds ${limit} tasks that have not ended; wait for one to end or cancel one`);
    this.name = "TaskLimitError";
  }
}

/**
 * The limit of non-terminal tasks per principal (design: Security). The id is minted here so the
 * quota entry and the task are one name; a call that ends inline, or a task that ends, releases it.
 */
export class Admission {
  constructor(
    private readonly quota: TaskQuota,
    private readonly audit: Audit,
    private readonly limit: number,
    private readonly clock: () => number,
  ) {}

  async admit(call: TaskCall | AdmittedCall): Promise<AdmittedCall> {
    if ("taskId" in call) return call;
    const now = this.clock();
    const taskId = newTaskId(now);
    if (this.limit > 0 && !(await this.admitted(call, taskId, now))) {
      this.audit.record("limit.refused", call.principal, { limit: "maxActiveTasksPerPrincipal", tool: toolOf(call) }, call.log);
      throw new TaskLimitError(this.limit);
    }
    // Object.assign, not a spread: on Node 20 a spread of this many fields gives each copy a map
    // of its own, held as long as the call (task-fields.ts, decodeTask).
    return Object.assign({}, call, { taskId });
  }

  /**
   * The principal's count lives in a shard of its own: where only that shard refuses writes, the
   * task is admitted unchecked (and says so in the audit log) rather than refused for another
   * shard's trouble. The limit is enforced again once the shard takes writes.
   */
  private async admitted(call: TaskCall, taskId: string, now: number): Promise<boolean> {
    try {
      return await this.quota.admitTask(call.principal, taskId, this.limit, now + call.ttlMs, now);
    } catch (err) {
      if (!refusedByShard(err)) throw err;
      this.audit.record(
        "limit.unchecked",
        call.principal,
        { limit: "maxActiveTasksPerPrincipal", reason: "the store shard of this caller's count refused the write" },
        call.log,
      );
      return true;
    }
  }

  /** The same call under a new task id (its create is tried again elsewhere): the quota entry moves with it. */
  async moveTo(call: AdmittedCall, taskId: string): Promise<AdmittedCall> {
    await this.release(call.principal, call.taskId);
    const now = this.clock();
    if (this.limit > 0) await this.quota.admitTask(call.principal, taskId, this.limit, now + call.ttlMs, now).catch(() => undefined);
    return Object.assign({}, call, { taskId });
  }

  async release(principal: string, taskId: string): Promise<void> {
    if (this.limit > 0) await this.quota.releaseTask(principal, taskId).catch(() => undefined);
  }
}

function toolOf(call: TaskCall): string | undefined {
  const name = call.request.params?.name;
  return typeof name === "string" ? name.slice(0, 200) : undefined;
}
