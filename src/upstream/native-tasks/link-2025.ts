import { randomBytes } from "node:crypto";
import { failure, isRequest, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import { isTerminalStatus, questionOf, taskOf, withoutRelatedTask } from "./shapes-2025.js";
import type { TaskChannel, TaskChannelClient } from "./tasks-2025.js";
import type { UpstreamAnswer, UpstreamTaskEvents, UpstreamTaskLink, UpstreamTaskRef, UpstreamTaskState } from "./upstream-tasks.js";

/** Between re-opening a tasks/result whose stream broke, while the task still runs. */
const REOPEN_MS = 500;

const NO_SINK: MessageSink = { send: () => true };

/**
 * One upstream task of the 2025-11-25 tasks utility (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks),
 * followed over the relay. tasks/result is held open: it blocks until the task is terminal and
 * is where the upstream delivers the task's questions (Input Required Status), each tagged with
 * the related-task `_meta`; the relay ties them to this request by its stream (HTTP) or by that
 * `_meta` (stdio) and hands them to `sink`.
 */
export class Link2025 implements UpstreamTaskLink {
  private readonly idBase = `nt-${randomBytes(6).toString("hex")}`;
  private seq = 0;
  private closed = false;
  private resultId?: JsonRpcId;
  private wake?: () => void;
  /** Questions handed to the front and not answered yet, by key. */
  private readonly open = new Set<string>();
  private readonly sink: MessageSink = { send: (message) => this.receive(message) };

  constructor(
    readonly ref: UpstreamTaskRef,
    private readonly client: TaskChannelClient,
    private readonly channel: TaskChannel,
    readonly events: UpstreamTaskEvents,
    private readonly onClose: (link: Link2025) => void,
  ) {}

  async get(): Promise<UpstreamTaskState | undefined> {
    const response = await this.channel.call(this.client, this.request("tasks/get"), NO_SINK);
    // -32602 is how a receiver says it does not know the task (Error Handling).
    if ("error" in response) {
      if (response.error.code === -32602) return undefined;
      throw new Error(`tasks/get failed: ${response.error.message}`);
    }
    const task = taskOf(response.result);
    if (!task) throw new Error("tasks/get answered something that is not a task");
    return task.state;
  }

  /** tasks/result until it answers for a terminal task; a broken stream is re-opened while the task runs. */
  async result(): Promise<JsonRpcResponse> {
    for (;;) {
      if (this.closed) throw new Error("the link to the upstream task is closed");
      const request = this.request("tasks/result");
      this.resultId = request.id;
      const response = await this.channel.call(this.client, request, this.sink);
      if (this.closed) throw new Error("the link to the upstream task is closed");
      if ("result" in response) return { ...response, result: withoutRelatedTask(response.result) };
      const state = await this.get().catch(() => "unknown" as const);
      if (state === undefined) return response;
      if (state !== "unknown" && isTerminalStatus(state.status)) return ended(response, state);
      await this.pause(state === "unknown" ? REOPEN_MS : Math.min(state.pollIntervalMs ?? REOPEN_MS, REOPEN_MS));
    }
  }

  async answer(key: string, outcome: UpstreamAnswer): Promise<boolean> {
    if (!this.open.delete(key)) return false;
    return this.channel.answer(this.client, { jsonrpc: "2.0", id: key, ...outcome } as JsonRpcResponse);
  }

  async cancel(): Promise<void> {
    await this.channel.call(this.client, this.request("tasks/cancel"), NO_SINK);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.onClose(this);
    if (this.resultId !== undefined) void this.channel.cancel(this.client, this.resultId, "taskgate stopped following this task").catch(() => undefined);
  }

  /** What arrives on the tasks/result stream: the task's questions, and their withdrawal. */
  private receive(message: JsonRpcMessage): boolean {
    if (isRequest(message)) {
      const question = questionOf(message);
      this.open.add(question.key);
      this.events.question(question);
      return true;
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      const key = String(message.params?.requestId);
      if (this.open.delete(key)) this.events.withdrawn(key);
    }
    return true;
  }

  private request(method: string): JsonRpcRequest {
    return { jsonrpc: "2.0", id: `${this.idBase}:${method}:${++this.seq}`, method, params: { taskId: this.ref.taskId } };
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/**
 * A terminal task whose tasks/result answered an error: a cancelled task has no result (the spec
 * leaves it open), so it says so in `data.status`; a failed one keeps the upstream's own error.
 */
function ended(response: JsonRpcResponse, state: UpstreamTaskState): JsonRpcResponse {
  if (state.status !== "cancelled" || !("error" in response)) return response;
  const message = state.statusMessage ?? response.error.message;
  return failure(response.id, { code: response.error.code, message, data: { status: "cancelled" } });
}
