import type { TaskRecord } from "../store/contract.js";
import type { NativeCaller } from "./native/native-caller.js";
import { OwnedCall } from "./owned-call.js";
import type { Owner } from "./owner.js";
import type { RerunPolicy } from "./rerun-policy.js";
import { newLeaseToken } from "./task-id.js";
import { taskCallOptions, type EngineDeps, type TaskCall } from "./types.js";

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
  owned.run(caller.call(call.client, call.request, owned, taskCallOptions(call.ttlMs)));
}

/**
 * Follow, from this replica, the upstream task a stopped replica was following: claimed
 * like a re-run (fresh lease, checked atomically), but nothing runs again: the bridge attaches to
 * the stored upstream task (and its session) and goes on polling it, so the call runs once and
 * its result is the upstream's. Questions the stopped replica had shown are gone with it.
 */
export async function resumeOrphan(deps: EngineDeps, owner: Owner, native: NativeCaller, task: TaskRecord, ended: (task: TaskRecord) => void): Promise<void> {
  if (task.upstreamTaskId === undefined) return;
  const { store, options, clock } = deps;
  const token = newLeaseToken();
  const lease = { owner: options.replicaId, token, leaseMs: options.leaseMs };
  const claimed = await store.claimTask(task.id, lease, "The replica following the upstream's task stopped; another replica follows it now", clock());
  if (!claimed.ok) return;
  deps.metrics.reaperAction("resumed");
  const client = { sessionId: `resume:${task.id}`, capabilities: task.clientCapabilities };
  const call: TaskCall = {
    caller: native,
    upstream: task.upstream,
    client,
    principal: task.principal,
    dialect: task.dialect,
    request: { jsonrpc: "2.0", id: `resume:${task.id}:${claimed.task.attempt}`, method: "tools/call", params: { name: task.tool } },
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    ...(task.frontSession !== undefined ? { frontSession: task.frontSession } : {}),
  };
  const owned = new OwnedCall(claimed.task, token, call, deps, () => {
    owner.remove(task.id);
    ended(claimed.task);
  });
  owner.add(owned);
  deps.logger.info({ taskId: task.id, upstreamTaskId: task.upstreamTaskId, previousOwner: task.owner }, "following the upstream task of a stopped replica");
  const ref = task.upstreamSession === undefined ? { taskId: task.upstreamTaskId } : { taskId: task.upstreamTaskId, session: task.upstreamSession };
  owned.run(native.resume(client, call.request, ref, owned, taskCallOptions(task.ttlMs)));
}

/**
 * Graceful drain (design: Replicas): owned calls get `drainMs` to finish; then each one left is
 * released for a re-run where that is allowed, and otherwise failed with a message saying why.
 * Returns the upstreams whose own tasks were handed over to another replica: their
 * upstream sessions must outlive this replica, since those tasks live in them.
 */
export async function drainOwned(deps: EngineDeps, owner: Owner, policy: RerunPolicy, drainMs: number): Promise<Set<string>> {
  await owner.whenIdle(drainMs);
  const left = [...owner.calls.values()];
  const message = `The taskgate replica running this call shut down before it finished (drain period ${drainMs} ms)`;
  const kept = new Set<string>();
  await Promise.allSettled(
    left.map(async (call: OwnedCall) => {
      const release = await releasable(deps, policy, call);
      if (release && call.upstreamTaskId !== undefined) kept.add(call.task.upstream);
      await call.handOver(release, message);
    }),
  );
  if (left.length) deps.logger.warn({ calls: left.length, upstreamTasksHandedOver: kept.size > 0 }, "drain period over: handed over the calls still running");
  return kept;
}

/**
 * A re-run needs another replica on a shared store: in the in-process store nobody would pick it
 * up. An upstream task that outlives this replica is always handed over: nothing runs again.
 */
async function releasable(deps: EngineDeps, policy: RerunPolicy, call: OwnedCall): Promise<boolean> {
  if (deps.store.kind === "memory" || call.task.parked) return false;
  if (call.upstreamTaskId !== undefined && policy.resumable(call.task.upstream)) return true;
  return policy.allows(call.task).catch(() => false);
}
