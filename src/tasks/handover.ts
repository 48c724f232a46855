import type { Orphan, TaskRecord } from "../store/contract.js";
import type { NativeCaller } from "./native/native-caller.js";
import { OwnedCall } from "./owned-call.js";
import type { Owner } from "./owner.js";
import type { RerunPolicy, StreamCaller } from "./rerun-policy.js";
import type { UpstreamCaller } from "../upstream/caller.js";
import { taskCallOptions, type EngineDeps, type TaskCall } from "./types.js";

/**
 * Run an orphan's call again on this replica: claim it in the store (one checked script: still
 * non-terminal, still held under the lapsed lease), then call the upstream with the params kept in the task.
 * Another replica that claimed it first wins; this one then does nothing.
 */
export async function adoptOrphan(
  deps: EngineDeps,
  owner: Owner,
  policy: RerunPolicy,
  orphan: Orphan,
  statusMessage: string,
  ended: (task: TaskRecord) => void,
): Promise<void> {
  const { task } = orphan;
  const caller = policy.caller(task.upstream);
  if (!caller || task.requestParams === undefined) return;
  const { store, options, clock } = deps;
  const token = owner.leaseToken();
  const claimed = await store.claimTask(orphan, { owner: options.replicaId, token }, statusMessage, clock());
  if (!claimed.ok) return;
  deps.metrics.reaperAction("rerun");
  const call: TaskCall = {
    caller,
    upstream: task.upstream,
    // A client of its own: the relay keeps request ids apart per client.
    client: { sessionId: `rerun:${task.id}`, capabilities: task.clientCapabilities },
    principal: task.principal,
    taskProtocol: task.taskProtocol,
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
  // Its own TTL bounds its wait in this replica's queue, counted from the task's creation.
  owned.run(caller.call(call.client, call.request, owned, owned.callOptions(call.ttlMs, call.principal, task.createdAt + task.ttlMs - clock())));
  carryCancel(owned, claimed.task);
}

/**
 * Follow, from this replica, the upstream task a stopped replica was following: claimed
 * like a re-run (fresh lease, checked atomically), but nothing runs again: the bridge attaches to
 * the stored upstream task (and its session) and goes on polling it, so the call runs once and
 * its result is the upstream's. Questions the stopped replica had shown are gone with it.
 */
export async function resumeOrphan(deps: EngineDeps, owner: Owner, native: NativeCaller, orphan: Orphan, ended: (task: TaskRecord) => void): Promise<void> {
  const { task } = orphan;
  const taskId = task.upstreamTaskId;
  if (taskId === undefined) return;
  const taken = await takeOver(
    deps,
    owner,
    native,
    orphan,
    "The replica following the upstream's task stopped renewing its lease; another replica follows it now",
    ended,
  );
  if (!taken) return;
  deps.logger.info({ taskId: task.id, upstreamTaskId: taskId, previousOwner: task.owner }, "following the upstream task of a stopped replica");
  const ref = task.upstreamSession === undefined ? { taskId } : { taskId, session: task.upstreamSession };
  taken.owned.run(native.resume(taken.call.client, taken.call.request, ref, taken.owned, taskCallOptions(task.ttlMs)));
  carryCancel(taken.owned, taken.task);
}

/**
 * Resume, from this replica, the response stream of a call a stopped replica made: claimed like
 * a re-run, but nothing runs again: a GET with the stored session and `Last-Event-ID` has the
 * upstream replay the stream (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
 * Resumability and Redelivery), and its response is the call's. What the stream carried before
 * comes again: progress, and the questions it asked (the stopped replica's were withdrawn by the claim).
 */
export async function resumeStreamOrphan(
  deps: EngineDeps,
  owner: Owner,
  caller: StreamCaller,
  orphan: Orphan,
  ended: (task: TaskRecord) => void,
): Promise<void> {
  const { lastEventId, upstreamRequestId, upstreamSession } = orphan.task;
  const requestId = requestIdOf(upstreamRequestId);
  if (lastEventId === undefined || requestId === undefined) return;
  const taken = await takeOver(
    deps,
    owner,
    caller,
    orphan,
    "The replica running this call stopped renewing its lease; another replica resumed its response stream",
    ended,
  );
  if (!taken) return;
  deps.logger.info({ taskId: orphan.task.id, lastEventId, previousOwner: orphan.task.owner }, "resuming the response stream of a stopped replica's call");
  const position = upstreamSession === undefined ? { requestId, lastEventId } : { requestId, lastEventId, session: upstreamSession };
  taken.owned.run(caller.resumeStream(taken.call.client, taken.call.request, position, taken.owned, taskCallOptions(orphan.task.ttlMs)));
  carryCancel(taken.owned, taken.task);
}

/**
 * A cancel recorded before the claim was routed to the stopped owner (its flag and hint name it):
 * this one carries it out. Else a call its old owner had already cancelled upstream, which the
 * upstream will never answer, would be followed until its TTL.
 */
function carryCancel(owned: OwnedCall, claimed: TaskRecord): void {
  if (claimed.cancelRequested) owned.requestCancel();
}

/** Claim an orphan to follow what its stopped owner started (checked atomically: another replica may win), and own it here. */
async function takeOver(
  deps: EngineDeps,
  owner: Owner,
  caller: UpstreamCaller,
  orphan: Orphan,
  statusMessage: string,
  ended: (task: TaskRecord) => void,
): Promise<{ owned: OwnedCall; call: TaskCall; task: TaskRecord } | undefined> {
  const { store, options, clock } = deps;
  const { task } = orphan;
  const token = owner.leaseToken();
  const claimed = await store.claimTask(orphan, { owner: options.replicaId, token }, statusMessage, clock());
  if (!claimed.ok) return undefined;
  deps.metrics.reaperAction("resumed");
  const call: TaskCall = {
    caller,
    upstream: task.upstream,
    client: { sessionId: `resume:${task.id}`, capabilities: task.clientCapabilities },
    principal: task.principal,
    taskProtocol: task.taskProtocol,
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
  return { owned, call, task: claimed.task };
}

/** The upstream id the stopped replica sent its request with (stored as JSON): a string or a number. */
function requestIdOf(json: string | undefined): string | number | undefined {
  if (json === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(json);
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Graceful drain (design: Replicas): owned calls get `drainMs` to finish; then each one left is
 * released for a re-run (or for a live replica to follow) where that is allowed, and otherwise
 * failed with a message saying why. The engine then ends the replica's lease, so a live
 * replica's reaper takes what was released at its next sweep.
 * Returns the upstreams whose own tasks were handed over to another replica: their
 * upstream sessions must outlive this replica, since those tasks live in them.
 */
export async function drainOwned(deps: EngineDeps, owner: Owner, policy: RerunPolicy, drainMs: number): Promise<Set<string>> {
  // Tasks still queued here are handed over at once: they leave the queue (nothing of them
  // ran) and a live replica queues them again once this one's lease ends, rather than
  // starting here only to be cut off by the drain.
  const queued = deps.store.kind === "memory" ? [] : [...owner.calls.values()].filter((call) => call.isQueued);
  const handing = `The taskgate replica this task was queued on shut down before it started; another replica queues it`;
  await Promise.allSettled(queued.map((call) => call.handOver(true, handing)));
  if (queued.length) deps.logger.info({ calls: queued.length }, "shutting down: handed over the tasks still queued");
  await owner.whenIdle(drainMs);
  const left = [...owner.calls.values()];
  const message = `The taskgate replica running this call shut down before it finished (drain period ${drainMs} ms)`;
  const kept = new Set<string>();
  await Promise.allSettled(
    left.map(async (call: OwnedCall) => {
      const release = await releasable(deps, policy, call);
      if (release && (call.upstreamTaskId !== undefined || call.resumable)) kept.add(call.task.upstream);
      await call.handOver(release, message);
    }),
  );
  if (left.length) deps.logger.warn({ calls: left.length, upstreamTasksHandedOver: kept.size > 0 }, "drain period over: handed over the calls still running");
  return kept;
}

/**
 * A re-run needs another replica on a shared store: in the in-process store nobody would pick it
 * up. An upstream task or a response stream that outlives this replica is always handed over:
 * nothing runs again.
 */
async function releasable(deps: EngineDeps, policy: RerunPolicy, call: OwnedCall): Promise<boolean> {
  if (deps.store.kind === "memory" || call.task.parked) return false;
  if (call.isQueued) return true;
  if (call.upstreamTaskId !== undefined && policy.resumable(call.task.upstream)) return true;
  if (call.upstreamTaskId === undefined && call.resumable && policy.streams(call.task.upstream)) return true;
  return policy.allows(call.task).catch(() => false);
}
