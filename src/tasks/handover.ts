import type { TaskRecord } from "../store/contract.js";
import { OwnedCall } from "./owned-call.js";
import type { Owner } from "./owner.js";
import type { RerunPolicy } from "./rerun-policy.js";
import { newLeaseToken } from "./task-id.js";
import { TASK_CALL, type EngineDeps, type TaskCall } from "./types.js";

/**
 * Run an orphan's call again on this replica: claim it in the store (one checked script: still
 * non-terminal, still unleased), then call the upstream with the params kept in the task.
 * Another replica that claimed it first wins; this one then does nothing.
 */
export async function adoptOrphan(
  deps: EngineDeps,
  owner: Owner,
  policy: RerunPolicy,
  task: TaskRecord,
  statusMessage: string,
  ended: (task: TaskRecord) => void,
): Promise<void> {
  const caller = policy.caller(task.upstream);
  if (!caller || task.requestParams === undefined) return;
  const { store, options, clock } = deps;
  const token = newLeaseToken();
  const claimed = await store.claimTask(task.id, { owner: options.replicaId, token, leaseMs: options.leaseMs }, statusMessage, clock());
  if (!claimed.ok) return;
  deps.metrics.reaperAction("rerun");
  const call: TaskCall = {
    caller,
    upstream: task.upstream,
    // A client of its own: the relay keeps request ids apart per client.
    client: { sessionId: `rerun:${task.id}`, capabilities: task.clientCapabilities },
    principal: task.principal,
    dialect: task.dialect,
    request: { jsonrpc: "2.0", id: `rerun:${task.id}:${claimed.task.attempt}`, method: "tools/call", params: task.requestParams },
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  const owned = new OwnedCall(claimed.task, token, call, deps, () => {
    owner.remove(task.id);
    ended(claimed.task);
  });
  owner.add(owned);
  deps.logger.info({ taskId: task.id, attempt: claimed.task.attempt, previousOwner: task.owner }, "running the call of a stopped replica again");
  owned.run(caller.call(call.client, call.request, owned, TASK_CALL));
}

/**
 * Graceful drain (design: Replicas): owned calls get `drainMs` to finish; then each one left is
 * released for a re-run where that is allowed, and otherwise failed with a message saying why.
 */
export async function drainOwned(deps: EngineDeps, owner: Owner, policy: RerunPolicy, drainMs: number): Promise<void> {
  await owner.whenIdle(drainMs);
  const left = [...owner.calls.values()];
  const message = `The taskgate replica running this call shut down before it finished (drain period ${drainMs} ms)`;
  await Promise.allSettled(
    left.map(async (call: OwnedCall) => call.handOver(await releasable(deps, policy, call), message)),
  );
  if (left.length) deps.logger.warn({ calls: left.length }, "drain period over: handed over the calls still running");
}

/** A re-run needs another replica on a shared store: in the in-process store nobody would pick it up. */
async function releasable(deps: EngineDeps, policy: RerunPolicy, call: OwnedCall): Promise<boolean> {
  return deps.store.kind !== "memory" && !call.task.parked && (await policy.allows(call.task).catch(() => false));
}
