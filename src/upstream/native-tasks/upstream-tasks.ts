import type { JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse } from "../../jsonrpc/message.js";
import type { TASKS_2025_VERSION } from "../../jsonrpc/versions.js";

/**
 * What taskgate needs from an upstream that runs tasks itself, whatever task protocol it
 * speaks. The bridge (src/tasks/native/) drives a front task from one of these; each upstream
 * task protocol implements it once:
 *
 * - 2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks):
 *   `params.task` on tools/call, `CreateTaskResult`, tasks/get, tasks/result (blocks; the
 *   upstream's questions come on its stream with the related-task `_meta`), tasks/cancel,
 *   `notifications/tasks/status`. Implemented in `tasks-2025.ts`.
 * - the `io.modelcontextprotocol/tasks` extension on the 2026-07-28 wire
 *   (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md):
 *   the server decides (`resultType: "task"`), tasks/get with the outcome inline and
 *   `inputRequests`, tasks/update with `inputResponses`, cooperative tasks/cancel,
 *   `notifications/tasks` on subscriptions/listen.
 *
 * The contract, in the order the bridge uses it:
 *
 * 1. `support(tool)` says whether the upstream runs a tool as a task of its own, and whether it
 *    must (`required`) or may (`optional`). Undefined: not natively; taskgate runs the call as a
 *    task of its own, as for any blocking server.
 * 2. `start(client, request, options, events)` sends the tools/call asking for a task. The
 *    upstream either made one (`{ task, state, link }`: its id and where it lives, its first
 *    state, and the link that follows it, as `attach` gives) or answered at once (`{ response }`: a result or a JSON-RPC error, relayed as it is; a
 *    2026-07-28 server may always answer without a task). The request is the front client's
 *    tools/call (name, arguments, `_meta`) without any task augmentation of its own.
 * 3. `attach(client, ref, events)` follows a task that exists already: one made by `start` on
 *    this replica, or one another replica made and stopped following (the ref was stored with
 *    the front task). Everything below is per attached task (`UpstreamTaskLink`).
 * 4. `get()` reads the task's state now (2025-11-25 tasks/get; extension tasks/get). Undefined
 *    when the upstream no longer knows the task (expired, purged, or its session is gone).
 *    The bridge polls it at the upstream's `pollIntervalMs`, bounded, until terminal.
 * 5. `result()` resolves with the upstream's own final answer to the original tools/call, once
 *    the task is terminal: the result (also one with `isError: true`, without the upstream's
 *    related-task `_meta`) or the JSON-RPC error, as the upstream sent it; the bridge puts the
 *    front request's id on it. Rejects only when the link is closed. 2025-11-25:
 *    tasks/result, held open (it is also where that protocol's questions arrive); extension:
 *    the inline `result` / `error` of the terminal tasks/get. A task that ended `cancelled`
 *    resolves with a JSON-RPC error whose `data.status` is "cancelled".
 * 6. `events.status(state)` is called with every state the upstream pushes
 *    (`notifications/tasks/status`; `notifications/tasks`) and every state `get()` read; the
 *    bridge keeps only what changed. Pushes are hints: the bridge polls anyway.
 * 7. `events.question(question)` is called for each question the upstream asks for this task
 *    (elicitation/create, sampling/createMessage, roots/list): 2025-11-25 server→client requests
 *    carrying `_meta["io.modelcontextprotocol/related-task"]`; extension `inputRequests`
 *    entries. `question.key` is unique for the life of the link and is what `answer` takes back.
 *    `events.withdrawn(key)` when the upstream takes a question back before it was answered.
 * 8. `answer(key, outcome)` gives the front client's answer to the upstream: 2025-11-25, the
 *    JSON-RPC response to its request; extension, tasks/update with `inputResponses`. False
 *    when nothing waits for that key any more (retries are safe).
 * 9. `cancel()` asks the upstream to stop (tasks/cancel). The task's end still comes from
 *    `result()` (2025-11-25: `cancelled` at once; extension: cooperative, it may complete).
 * 10. `close()` stops following: pending waits are abandoned, the upstream task is untouched
 *    (another replica may attach to it).
 *
 * `durable`: whether an upstream task outlives this replica's connection (an HTTP upstream: its
 * tasks live in the server; stdio: in a child process that dies with the replica). Only then is
 * a stopped replica's bridge resumed elsewhere.
 */
export interface UpstreamTasks {
  /** Which upstream task protocol this speaks, for logs and /readyz. */
  readonly generation: typeof TASKS_2025_VERSION | "io.modelcontextprotocol/tasks";
  readonly durable: boolean;
  support(tool: string): Promise<NativeSupport | undefined>;
  /** `support(tool)` when it is known without waiting (the tools list read lately); "unknown" when only `support` can answer, after a wait. */
  supportNow?(tool: string): NativeSupport | undefined | "unknown";
  start(client: UpstreamTaskClient, request: JsonRpcRequest, options: StartOptions, events: UpstreamTaskEvents): Promise<UpstreamStart>;
  attach(client: UpstreamTaskClient, ref: UpstreamTaskRef, events: UpstreamTaskEvents): UpstreamTaskLink;
}

/** What the upstream declares for one tool (2025-11-25 `execution.taskSupport`, under `tasks.requests.tools.call`). */
export type NativeSupport = "required" | "optional";

/**
 * Where an upstream task lives, stored with the front task so another replica can attach: its
 * id, and the upstream session that made it (servers built on the SDK 1.x bind tasks to the
 * session: another session's tasks/get reads "not found").
 */
export interface UpstreamTaskRef {
  taskId: string;
  session?: string;
}

/** Statuses are the same words in both task protocols. */
export type UpstreamTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export interface UpstreamTaskState {
  status: UpstreamTaskStatus;
  statusMessage?: string;
  /** How long the upstream keeps the task, from its creation (ms); null: unlimited. */
  ttlMs: number | null;
  /** The upstream's suggested polling interval (ms). */
  pollIntervalMs?: number;
}

/** The front client a call is made for; the relay keeps clients' ids and questions apart. */
export interface UpstreamTaskClient {
  sessionId: string;
  capabilities: Record<string, unknown>;
  /** The client's own Authorization, where the upstream forwards it (in memory only). */
  authorization?: string;
}

export interface StartOptions {
  /** The lifetime taskgate asks for (the front task's); the upstream may keep it shorter. Absent: the upstream's default. */
  ttlMs?: number;
}

export type UpstreamStart = { task: UpstreamTaskRef; state: UpstreamTaskState; link: UpstreamTaskLink } | { response: JsonRpcResponse };

/** An upstream question as the front shows it: `{method, params}` without the 2025-11-25-only `_meta`. */
export interface UpstreamQuestion {
  key: string;
  request: { method: string; params?: Record<string, unknown> };
}

export type UpstreamAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

export interface UpstreamTaskEvents {
  status(state: UpstreamTaskState): void;
  question(question: UpstreamQuestion): void;
  withdrawn(key: string): void;
}

/** One upstream task being followed. */
export interface UpstreamTaskLink {
  readonly ref: UpstreamTaskRef;
  get(): Promise<UpstreamTaskState | undefined>;
  result(): Promise<JsonRpcResponse>;
  answer(key: string, outcome: UpstreamAnswer): Promise<boolean>;
  cancel(): Promise<void>;
  close(): void;
}
