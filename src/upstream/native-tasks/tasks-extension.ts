import { RPC } from "../../jsonrpc/codes.js";
import { failure, isFailure, success, type JsonRpcErrorObject, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { pause } from "../backoff.js";
import { UpstreamError, type UpstreamConnector } from "../connector.js";
import { TASKS_EXTENSION, isObject } from "../modern/envelope.js";
import type {
  NativeSupport,
  StartOptions,
  UpstreamAnswer,
  UpstreamStart,
  UpstreamTaskClient,
  UpstreamTaskEvents,
  UpstreamTaskLink,
  UpstreamTaskRef,
  UpstreamTasks,
  UpstreamTaskState,
  UpstreamTaskStatus,
} from "./upstream-tasks.js";

const DECLARED = { [TASKS_EXTENSION]: {} };
const STATUSES = new Set<UpstreamTaskStatus>(["working", "input_required", "completed", "failed", "cancelled"]);
const TERMINAL = new Set<UpstreamTaskStatus>(["completed", "failed", "cancelled"]);
const DEFAULT_POLL_MS = 1000;
/** Polling never faster than this, whatever the upstream suggests. */
const MIN_POLL_MS = 50;

/** Whether the upstream speaks 2026-07-28 and lists the tasks extension in its server/discover capabilities. */
export function offersTasksExtension(connector: UpstreamConnector): boolean {
  const extensions = connector.initializeResult()?.capabilities.extensions;
  return connector.generation() === "modern" && isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined;
}

/**
 * The upstream's own tasks through the `io.modelcontextprotocol/tasks` extension on the 2026-07-28
 * wire (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md):
 * taskgate declares the extension on the request, the server alone decides whether the call
 * becomes a task (`resultType: "task"`) or is answered at once; tasks/get carries the outcome
 * inline and the questions in `inputRequests`, tasks/update answers them, tasks/cancel is
 * cooperative. Every request carries the extension in its `_meta` (a non-declaring tasks/* call
 * is refused with -32021).
 */
export class ExtensionTasks implements UpstreamTasks {
  readonly generation = "io.modelcontextprotocol/tasks" as const;

  constructor(
    private readonly connector: UpstreamConnector,
    /** An HTTP upstream's tasks live in the server and outlive this replica; a stdio child's do not. */
    readonly durable: boolean,
  ) {}

  /** The server decides per request (the extension has no per-tool declaration), so any tool may become one. */
  async support(tool: string): Promise<NativeSupport | undefined> {
    return this.supportNow(tool);
  }

  supportNow(_tool: string): NativeSupport | undefined {
    return offersTasksExtension(this.connector) ? "optional" : undefined;
  }

  async start(client: UpstreamTaskClient, request: JsonRpcRequest, _options: StartOptions, events: UpstreamTaskEvents): Promise<UpstreamStart> {
    // The extension has no way to ask for a lifetime: the server says what it keeps (ttlMs).
    const { task: _task, ...params } = request.params ?? {};
    const response = await send(this.connector, client, "tools/call", params);
    if (isFailure(response) || response.result.resultType !== "task") return { response: { ...response, id: request.id } };
    const { resultType: _type, ...created } = response.result;
    if (typeof created.taskId !== "string")
      return { response: failure(request.id, { code: RPC.INTERNAL_ERROR, message: "the upstream created a task without a taskId" }) };
    const ref: UpstreamTaskRef = { taskId: created.taskId };
    const link = new ExtensionTaskLink(this.connector, client, ref, events, request.id);
    const state = link.observe(created);
    return { task: ref, state, link };
  }

  attach(client: UpstreamTaskClient, ref: UpstreamTaskRef, events: UpstreamTaskEvents): UpstreamTaskLink {
    return new ExtensionTaskLink(this.connector, client, ref, events, ref.taskId);
  }
}

/** One upstream task: read with tasks/get, answered with tasks/update, cancelled with tasks/cancel. */
class ExtensionTaskLink implements UpstreamTaskLink {
  /** Question keys handed on (never reused by the upstream, the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md), and those still open. */
  private readonly shown = new Set<string>();
  private readonly open = new Map<string, string>();
  private readonly stopped = new AbortController();
  private readonly ended: Promise<JsonRpcResponse>;
  private end!: (response: JsonRpcResponse) => void;
  private done = false;
  private polling = false;
  private pollMs = DEFAULT_POLL_MS;
  /** When a tasks/get last answered (performance.now()): a caller that polls itself is not doubled. */
  private lastReadAt = -Infinity;

  constructor(
    private readonly connector: UpstreamConnector,
    private readonly client: UpstreamTaskClient,
    readonly ref: UpstreamTaskRef,
    private readonly events: UpstreamTaskEvents,
    private readonly requestId: JsonRpcId,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve));
  }

  async get(): Promise<UpstreamTaskState | undefined> {
    const response = await send(this.connector, this.client, "tasks/get", { taskId: this.ref.taskId });
    if (isFailure(response)) {
      if (response.error.code === RPC.INVALID_PARAMS) return undefined;
      throw new UpstreamError(
        `upstream '${this.connector.name}' refused tasks/get for ${this.ref.taskId}: ${response.error.message} (${response.error.code})`,
        "protocol",
      );
    }
    this.lastReadAt = performance.now();
    return this.observe(response.result);
  }

  /** Resolves once the task is terminal, with the upstream's own result or error; polls while nobody else does. */
  result(): Promise<JsonRpcResponse> {
    void this.poll();
    return this.ended;
  }

  async answer(key: string, outcome: UpstreamAnswer): Promise<boolean> {
    const method = this.open.get(key);
    if (method === undefined) return false;
    // An error has no place in inputResponses: a refused elicitation is the user dismissing it; nothing else can be said.
    const value = "result" in outcome ? outcome.result : method === "elicitation/create" ? { action: "cancel" } : undefined;
    if (value === undefined) return false;
    this.open.delete(key);
    const response = await send(this.connector, this.client, "tasks/update", { taskId: this.ref.taskId, inputResponses: { [key]: value } });
    return !isFailure(response);
  }

  async cancel(): Promise<void> {
    await send(this.connector, this.client, "tasks/cancel", { taskId: this.ref.taskId });
  }

  close(): void {
    this.stopped.abort();
  }

  /** A detailed task the upstream sent (CreateTaskResult, tasks/get): its state, its questions, its outcome. */
  observe(task: Record<string, unknown>): UpstreamTaskState {
    const state = stateOf(task);
    if (state.pollIntervalMs !== undefined) this.pollMs = Math.max(MIN_POLL_MS, state.pollIntervalMs);
    this.events.status(state);
    this.questions(state.status === "input_required" && isObject(task.inputRequests) ? task.inputRequests : {});
    if (TERMINAL.has(state.status)) this.finish(this.outcome(state, task));
    return state;
  }

  private questions(requests: Record<string, unknown>): void {
    for (const [key, request] of Object.entries(requests)) {
      if (this.shown.has(key) || !isObject(request) || typeof request.method !== "string") continue;
      this.shown.add(key);
      this.open.set(key, request.method);
      this.events.question({ key, request: isObject(request.params) ? { method: request.method, params: request.params } : { method: request.method } });
    }
    // Answered elsewhere, or taken back: nobody is asked any more.
    for (const key of [...this.open.keys()]) {
      if (Object.hasOwn(requests, key)) continue;
      this.open.delete(key);
      this.events.withdrawn(key);
    }
  }

  private outcome(state: UpstreamTaskState, task: Record<string, unknown>): JsonRpcResponse {
    if (state.status === "completed" && isObject(task.result)) return success(this.requestId, task.result);
    if (state.status === "failed" && isErrorObject(task.error)) return failure(this.requestId, task.error);
    const message = state.statusMessage ?? `the upstream task ended ${state.status}`;
    return failure(this.requestId, {
      code: state.status === "cancelled" ? RPC.REQUEST_CANCELLED : RPC.INTERNAL_ERROR,
      message,
      data: { status: state.status },
    });
  }

  private finish(response: JsonRpcResponse): void {
    if (this.done) return;
    this.done = true;
    this.end(response);
  }

  /** One loop per link, at the upstream's pollIntervalMs, until terminal or close(); a failed read is tried again. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    while (!this.done && !this.stopped.signal.aborted) {
      const fresh = performance.now() - this.lastReadAt < this.pollMs;
      const state = fresh ? "fresh" : await this.get().catch(() => "retry" as const);
      if (state === undefined)
        this.finish(
          failure(this.requestId, { code: RPC.INTERNAL_ERROR, message: `upstream '${this.connector.name}' no longer knows task ${this.ref.taskId}` }),
        );
      if (this.done) break;
      await pause(this.pollMs, this.stopped.signal);
    }
    this.polling = false;
  }
}

function send(connector: UpstreamConnector, client: UpstreamTaskClient, method: string, params: Record<string, unknown>): Promise<JsonRpcResponse> {
  const authorization = client.authorization === undefined ? {} : { authorization: client.authorization };
  return connector.request({ method, params, clientCapabilities: client.capabilities, extensions: DECLARED, ...authorization });
}

function stateOf(task: Record<string, unknown>): UpstreamTaskState {
  const status = STATUSES.has(task.status as UpstreamTaskStatus) ? (task.status as UpstreamTaskStatus) : "working";
  const state: UpstreamTaskState = { status, ttlMs: typeof task.ttlMs === "number" ? task.ttlMs : null };
  if (typeof task.statusMessage === "string") state.statusMessage = task.statusMessage;
  if (typeof task.pollIntervalMs === "number") state.pollIntervalMs = task.pollIntervalMs;
  return state;
}

function isErrorObject(value: unknown): value is JsonRpcErrorObject {
  return isObject(value) && typeof value.code === "number" && typeof value.message === "string";
}
