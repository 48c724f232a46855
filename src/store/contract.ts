import type { TASKS_2025_VERSION } from "../jsonrpc/versions.js";
import type { StoreFormatRecorder } from "./format.js";

/**
 * The state contract. One interface, two implementations (memory/, redis/), one shared test suite
 * (test/contract/store.contract.ts): sessions, tasks, and the bus between replicas.
 *
 * Every method is one atomic operation on the backing store: nothing here reads in TypeScript
 * and writes afterwards.
 */

/** A legacy-era front session (protocol versions with `initialize`). Any replica can serve it. */
export interface SessionRecord {
  id: string;
  /** The upstream (by config name) the session was opened against. */
  upstream: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: Record<string, unknown>;
  /** Who opened it: from the auth layer, or `session:<id>` without auth. */
  principal: string;
  createdAt: string; // ISO 8601
}

export interface SessionStore {
  /** Store a new session; it expires `ttlMs` after the last `getSession` that touched it. */
  createSession(record: SessionRecord, ttlMs: number): Promise<void>;
  /** Read a session and push its expiry out to `ttlMs` from now, in one round trip. */
  getSession(id: string, ttlMs: number): Promise<SessionRecord | undefined>;
  /** Remove it; true when it existed. */
  deleteSession(id: string): Promise<boolean>;
  /** Whether it still exists, without pushing its expiry out. */
  hasSession(id: string): Promise<boolean>;
}

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
/**
 * Which task protocol made the task: `2025-11-25`, the 2025-11-25 tasks utility (`params.task`,
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks); `extension`,
 * the tasks extension (io.modelcontextprotocol/tasks,
 * https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md); or
 * `none`: a caller that declared neither, served through the gateway tools
 * (`tasks.unawareClients: handle`), which behaves as `extension` does (cooperative cancel,
 * `isError` results complete). Logs, audit records and the admin API use these words; the
 * store keeps its own codes (store/task-fields.ts).
 */
export type TaskProtocol = typeof TASKS_2025_VERSION | "extension" | "none";

/** A server→client request the upstream made during a detached call, waiting for the client. */
export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** How the upstream call ended: its result (even with isError) or its JSON-RPC error. */
export type TaskOutcome = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

/** One detached `tools/call`. All its keys share one hash tag; all expire `ttlMs` after `createdAt`. */
/** The part of a task that tasks/get renders on either wire (TaskStore.viewTask); a TaskRecord is one. */
export type TaskView = Pick<
  TaskRecord,
  "id" | "status" | "statusMessage" | "createdAt" | "lastUpdatedAt" | "ttlMs" | "pollIntervalMs" | "inputRequests" | "outcome" | "parked"
>;

export interface TaskRecord {
  id: string;
  principal: string;
  taskProtocol: TaskProtocol;
  upstream: string;
  tool: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number; // epoch ms
  lastUpdatedAt: number; // epoch ms
  ttlMs: number;
  pollIntervalMs: number;
  /** Bumped by every change; readers compare it to tell a fresh record from a stale one. */
  revision: number;
  /** The replica holding the upstream call. */
  owner: string;
  /**
   * The request the owner sent upstream (JSON of its id), kept with `lastEventId` and
   * `upstreamSession` when its response stream carries event ids: another replica can then
   * resume that stream instead of failing or re-running the call.
   */
  upstreamRequestId?: string;
  cancelRequested: boolean;
  /** The client capabilities of the request that created the task (input gating). */
  clientCapabilities: Record<string, unknown>;
  /**
   * The legacy-era front session that created it (the 2025-11-25 tasks): the upstream's questions go to
   * that session's GET stream and to no other session's, even of the same principal.
   */
  frontSession?: string;
  /** Outstanding input requests by key. Keys are never reused for the life of the task. */
  inputRequests: Record<string, InputRequest>;
  /** Answers written by tasks/update (or a 2025-11-25 response) that the owner has not delivered yet. */
  inputResponses: Record<string, unknown>;
  /** Present once terminal (completed/failed); kept in a key of its own. */
  outcome?: TaskOutcome;
  /** Which run of the call this is: 1, then one more each time a live replica re-runs it after its owner stopped. */
  attempt: number;
  /**
   * Set when the upstream runs the call as a task of its own: that task's id and the
   * upstream session it lives in, so another replica can follow it after this owner stops.
   */
  upstreamTaskId?: string;
  upstreamSession?: string;
  /**
   * An event id of the call's response stream (the first one, the priming event's): a resume
   * with `Last-Event-ID` replays what the upstream sent on that stream after it (2025-11-25
   * transports, Resumability and Redelivery).
   */
  lastEventId?: string;
  /** The `tools/call` params (name, arguments) the upstream received, kept so another replica can run it again. */
  requestParams?: Record<string, unknown>;
  /**
   * A call still synchronous, parked by an MRTR round (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr, SEP-2322): its questions wait here
   * for the client's retry, and it is not a task the client knows of until it detaches.
   */
  parked: boolean;
  /**
   * Waiting in its owner's queue for a slot on the upstream: nothing of it has run, so if its
   * owner stops, a live replica queues it again (with `requestParams`, kept while it waits).
   */
  queued?: boolean;
}

/** An upstream's own task a front task is bridged to: its id, and the upstream session that made it. */
export interface UpstreamTaskRef {
  taskId: string;
  session?: string;
}

/**
 * Where a call's response stream can be resumed (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
 * Resumability and Redelivery): the upstream session, the request (JSON of its upstream id) and
 * an event id the upstream gave on that stream.
 */
export interface StreamPosition {
  session?: string;
  requestId: string;
  lastEventId: string;
}

/** Which tasks an operator lists; an omitted field matches every task. */
export interface TaskFilter {
  status?: readonly TaskStatus[];
  upstream?: string;
  tool?: string;
}

export type NewTask = Omit<
  TaskRecord,
  "revision" | "cancelRequested" | "inputRequests" | "inputResponses" | "outcome" | "lastUpdatedAt" | "parked" | "attempt"
> & {
  parked?: boolean;
};

/**
 * Who writes a change: an owner gives the token of the replica lease it holds the task under
 * (refused with "stale_lease" unless the task is held under exactly that token); a client its principal (another principal's task is
 * "not_found", exactly like a missing one). Omitted: unfenced.
 */
export interface ChangeFence {
  leaseToken?: string;
  principal?: string;
  now: number; // epoch ms, becomes lastUpdatedAt
}

/** How a task ends: its outcome and last statusMessage (omitted: kept), and a shorter life (see bind-upstream-task). */
export interface TaskEnding extends ChangeFence {
  outcome?: TaskOutcome;
  statusMessage?: string;
  ttlMs?: number;
}

/**
 * One atomic change of a task, by name. Which statuses each may start from is the store's
 * rule (store/task-rules.ts TRANSITION_RULES), checked inside the Redis script of the same name;
 * the caller only says which transition it makes and who makes it.
 */
export type TaskChange =
  /** A question of the upstream's waits for the client: the task is input_required. */
  | (ChangeFence & { kind: "start-input"; addInputRequests: Record<string, InputRequest> })
  /** Withdraw outstanding input requests (nobody answered in time); an input_required task with none left goes back to working. */
  | (ChangeFence & { kind: "withdraw-input"; removeInputRequests: string[] })
  /** Progress; null clears it. */
  | (ChangeFence & { kind: "set-status-message"; statusMessage: string | null })
  /**
   * The upstream's own task this call runs as, kept when another replica claims the task;
   * `ttlMs` shortens the task's life to that from createdAt (the upstream keeps its own task no
   * longer). Only ever shortens: a longer value changes nothing.
   */
  | (ChangeFence & { kind: "bind-upstream-task"; upstreamTask: UpstreamTaskRef; ttlMs?: number })
  /** The call's response stream can be resumed from here; kept when another replica claims the task. */
  | (ChangeFence & { kind: "bind-stream"; stream: StreamPosition })
  /** A parked call detaches: from now on it is a task the client may see. */
  | (ChangeFence & { kind: "detach" })
  /** The call waits in its owner's queue: what it would send is kept, so another replica can queue it again if the owner stops. */
  | (ChangeFence & { kind: "queue"; requestParams: Record<string, unknown> })
  /** The call leaves the queue to run: from now on it is a started call; its params go unless re-runs keep them. */
  | (ChangeFence & { kind: "start-queued"; keepParams: boolean })
  /** The tasks extension's cancel: recorded for the owner, which stops the call. */
  | (ChangeFence & { kind: "request-cancel" })
  | (TaskEnding & { kind: "complete" | "fail" })
  /** `cancelRequested`: a client's cancel (the 2025-11-25 tasks) records that it asked. */
  | (TaskEnding & { kind: "cancel"; cancelRequested?: true });

export type TransitionResult =
  | { ok: true; task: TaskRecord }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "wrong_status" | "stale_lease"; task: TaskRecord };

/**
 * Who holds a task: the replica (`owner`, where work for the task is routed) and the token of that
 * replica's lease (the owner epoch). The token is written into the task when it is created or
 * claimed and every owner write names it (fencing): once another replica claimed the task, the
 * old holder's writes are refused with "stale_lease".
 */
export interface Lease {
  owner: string;
  token: string;
}

/** The bus channel a task's hints go to (see TaskStore); subscribe to it through `Store.bus`. */
export { taskChannel } from "./channels.js";

/**
 * Every successful change (create, transition, input responses added or taken) publishes the new
 * revision as a hint on bus channel `task:<id>`: from inside the Lua script in Redis, so no change
 * goes unannounced. Readers re-read the record; the hint only wakes them.
 */
export interface TaskStore {
  /** Write the task, held under `lease` (its replica's lease token); resolved means any replica's getTask finds it (durable creation). */
  createTask(task: NewTask, lease: Lease): Promise<TaskRecord>;
  /** One round trip. Another principal's task is undefined, exactly like a missing or expired one. `null` = any principal (operators). */
  getTask(id: string, principal: string | null): Promise<TaskRecord | undefined>;
  /**
   * What tasks/get renders, as getTask would find it, in one round trip: the record's status fields,
   * its open input requests, and its outcome when `withOutcome` (else a store may leave it unread).
   */
  viewTask(id: string, principal: string | null, withOutcome: boolean): Promise<TaskView | undefined>;
  transitionTask(id: string, change: TaskChange): Promise<TransitionResult>;
  /**
   * Several transitions in one round trip per store node (an owner's outcome writes that are due
   * together): each is applied and answered as `transitionTask` would, in order; one that fails
   * (a script error) is its Error and fails no other. Rejects as a whole when the store does not answer.
   */
  transitionTasks(changes: ReadonlyArray<{ id: string; change: TaskChange }>): Promise<(TransitionResult | Error)[]>;
  /**
   * tasks/update: store the answers whose keys are outstanding right now and ignore the rest
   * (never issued, already answered). Returns the keys accepted, or undefined for an unknown task.
   */
  addInputResponses(
    id: string,
    principal: string,
    responses: Record<string, unknown>,
    now: number,
  ): Promise<{ accepted: string[]; task: TaskRecord } | undefined>;
  /**
   * The owner takes the answers waiting for delivery, atomically removing them from inputResponses
   * and their keys from inputRequests; an input_required task with nothing left outstanding goes
   * back to working. Fenced by the lease token. Taken answers are kept aside, and those for the
   * `waitingFor` keys (questions the owner has not answered upstream yet) are returned again:
   * a take whose reply was lost (the store crashed after running it) is then retried safely.
   */
  takeInputResponses(
    id: string,
    leaseToken: string,
    now: number,
    waitingFor?: readonly string[],
  ): Promise<{ ok: true; responses: Record<string, unknown>; task: TaskRecord } | { ok: false; reason: "not_found" | "stale_lease" }>;
  /**
   * A principal's tasks, newest first (tasks/list of the 2025-11-25 tasks). `cursor` is opaque and comes from a
   * previous page; an invalid one is undefined. Expired tasks never appear.
   */
  listTasks(principal: string, page: { cursor?: string; limit: number }): Promise<{ tasks: TaskRecord[]; nextCursor?: string } | undefined>;
  /**
   * Every principal's tasks, for operators (the admin API), newest first, filtered. A page may hold
   * fewer than `limit` tasks while `nextCursor` says more were not examined yet: a filter that
   * matches little must not make one page read the whole store. An invalid cursor is undefined.
   */
  listAllTasks(filter: TaskFilter, page: { cursor?: string; limit: number }): Promise<{ tasks: TaskRecord[]; nextCursor?: string } | undefined>;
  /**
   * Of `ids`, those whose record is gone (expired, or lost: a failover without replication, a
   * flush, an eviction). One round trip per store node and 1,000 ids; the owner asks it of its calls.
   */
  missingTasks(ids: readonly string[]): Promise<string[]>;
}

/**
 * A lease per replica, not per task: what the store holds for calls at rest does not grow with
 * their number. A replica takes a lease token when it starts and renews it every third of
 * `leaseMs`; a token whose lease lapsed is over for good (a renewal that comes too late is
 * refused and the replica takes a new token). Tasks are created and claimed under the token, and
 * the store keeps, per token, the tasks it holds, so the reaper looks only at the tasks of lapsed
 * leases. Writers that need an owner's attention (a cancel, answers) also flag the task for it,
 * so a lost bus hint is picked up by the owner's next renewal.
 */
export interface ReplicaLeases {
  /** Start the lease of a new `token` (`first`) or renew it; false once it lapsed: it is over for good (nor is a token started twice). */
  renewReplicaLease(token: string, leaseMs: number, first?: boolean): Promise<boolean>;
  /**
   * Whether the store knows `token` at all, held or lapsed. A renewal refused for a token the
   * store does not know, sent while the lease could not have lapsed, means the store lost it
   * (a flush, a failover without replication): nobody can have reaped under it.
   */
  hasReplicaLease(token: string): Promise<boolean>;
  /** End it now (after a replica handed its calls over at shutdown): its tasks are orphans at the next sweep. */
  endReplicaLease(token: string): Promise<void>;
  /** A task of `owner`'s waits for it (a cancel, answers): kept until the owner takes it. */
  flagForOwner(owner: string, taskId: string): Promise<void>;
  /** What was flagged for `owner`, taken (at most `max` ids). */
  takeFlagged(owner: string, max: number): Promise<string[]>;
}

/** A task found by the reaper: still held under `token`, a lease that lapsed. */
export interface Orphan {
  task: TaskRecord;
  token: string;
}

/**
 * What the reaper needs (design: Replicas): tasks whose owner stopped, found through the tasks of
 * lapsed leases (a few commands per sweep, plus one per real orphan), and ended or taken over by
 * one atomic, checked change each.
 */
export interface OrphanStore {
  /**
   * Non-terminal tasks still held under a lease that lapsed, at most `limit`. Entries of tasks that
   * ended, were claimed or expired are dropped on the way, and a lapsed lease with nothing left is
   * forgotten once it lapsed more than `settleMs` ago (a create sent under it just before it lapsed
   * has landed by then).
   */
  findOrphans(limit: number, settleMs: number): Promise<Orphan[]>;
  /**
   * End an orphan, only while it is non-terminal and still held under the lapsed token it was found under,
   * checked atomically, so a replica that claimed it meanwhile keeps it. "wrong_status" when it
   * ended; "stale_lease" when another lease holds it.
   */
  reapTask(orphan: Orphan, end: OrphanEnd): Promise<TransitionResult>;
  /**
   * Take over an orphan to run its call again (or follow what it started: its upstream task,
   * its stream position, which are kept): held under `lease` from now on, the next attempt,
   * back to `working` with no outstanding input. Same atomic checks as reapTask.
   */
  claimTask(orphan: Orphan, lease: Lease, statusMessage: string, now: number): Promise<TransitionResult>;
  /** A lock across replicas (SET NX PX): true when `holder` has it now, fresh for `ttlMs`. */
  acquireLock(name: string, holder: string, ttlMs: number): Promise<boolean>;
}

/** How the reaper ends an orphan: failed with an error, or cancelled (a cancel was asked for). */
export interface OrphanEnd {
  to: "failed" | "cancelled";
  statusMessage: string;
  outcome?: TaskOutcome;
  now: number;
}

/** Hints between replicas. A lost message only delays: readers always re-read the store. */
export interface EventBus {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active. The returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
}

/**
 * How many non-terminal tasks a principal holds (limits.maxActiveTasksPerPrincipal). Kept apart
 * from the task keys (another hash tag), so it is checked before a task is made and released
 * when its owner writes the end; an entry also lapses at the task's expiry, so a replica that
 * died holding tasks frees its principals' quota by then at the latest.
 */
export interface TaskQuota {
  /** Count `taskId` against `principal` unless it holds `limit` live entries already; false = refused. */
  admitTask(principal: string, taskId: string, limit: number, until: number, now: number): Promise<boolean>;
  releaseTask(principal: string, taskId: string): Promise<void>;
}

export interface Store extends SessionStore, TaskStore, ReplicaLeases, OrphanStore, TaskQuota {
  readonly kind: "memory" | "redis";
  /** Tasks live on several shards (Redis Cluster): a create one shard refuses may succeed under another id. */
  readonly sharded: boolean;
  readonly bus: EventBus;
  /** Where a shared store records its format (store/format.ts); the in-process store has none. */
  readonly format?: StoreFormatRecorder;
  /**
   * What in the backing store's own configuration can lose tasks, one line each, for the log at
   * start (Redis: a maxmemory-policy other than noeviction). Empty when all is well or unknown.
   */
  configurationWarnings(): Promise<string[]>;
  /** Resolves when the backing store answers (for /readyz); rejects otherwise, within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The store did not answer: the caller turns this into -32603 "task store unavailable". */
export class StoreUnavailableError extends Error {
  constructor(cause?: unknown) {
    super("task store unavailable", { cause });
    this.name = "StoreUnavailableError";
  }
}

/**
 * The store answered but refused the write (a primary under min-replicas-to-write whose replicas
 * are away, a replica still named primary after a failover): that one shard is in trouble, not
 * the whole store. The store not answering at all is not this.
 */
export function refusedByShard(err: unknown): boolean {
  return err instanceof StoreUnavailableError && err.cause instanceof Error && err.cause.name === "ReplyError";
}

/**
 * The write reached the primary but not, within the bound, the replicas a failover could promote
 * (Redis WAIT), or the primary did not fsync it to its AOF (WAITAOF, `missing: "aof"`): it may be
 * there or not, and the caller must not be told it was made. Retried like any unavailability; the
 * client is told "the task store could not confirm the write" and which confirmation was missing.
 */
export class StoreUnconfirmedError extends StoreUnavailableError {
  constructor(
    readonly acknowledged: number,
    readonly needed: number,
    readonly timeoutMs: number,
    readonly missing: "replicas" | "aof" = "replicas",
  ) {
    super(
      new Error(
        missing === "replicas"
          ? `${acknowledged} of ${needed} replicas acknowledged the write within ${timeoutMs} ms`
          : `the replicas have the write, but the primary did not confirm within ${timeoutMs} ms that it fsynced it to its AOF (WAITAOF)`,
      ),
    );
    this.name = "StoreUnconfirmedError";
  }
}
