import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { QUEUED_NOTICE } from "./caller.js";
import { isBridgeNotice, UPSTREAM_STATUS_NOTICE, UPSTREAM_TASK_NOTICE } from "./native/notices.js";

function isQueuedNotice(message: JsonRpcMessage): message is JsonRpcNotification {
  return isNotification(message) && message.method === QUEUED_NOTICE;
}

/** A notice for the task a call may become (queue place, upstream task): never for the client. */
function isTaskNotice(message: JsonRpcMessage): message is JsonRpcNotification {
  return isNotification(message) && (message.method === QUEUED_NOTICE || isBridgeNotice(message.method));
}

/**
 * The sink of a call that may detach: first the client's own reply, then the task. Progress the
 * engine asked for on the client's behalf (no token of the client's) never reaches the client.
 */
export class SwitchSink implements MessageSink {
  private detached?: MessageSink;
  private readonly held: JsonRpcRequest[] = [];
  /** The latest notice of each kind (queue place, upstream task and status), for the task it may become. */
  private readonly notices = new Map<string, JsonRpcMessage>();

  /**
   * `onInputBeforeDetach` set: a server→client request before the call detached is held and the
   * engine told, which parks the call (an MRTR round, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr; the front wire cannot carry
   * the request itself); the held request then goes to the parked call's sink. Unset: it goes to
   * the front like everything else.
   */
  constructor(
    private readonly front: MessageSink,
    private readonly onInputBeforeDetach?: () => void,
  ) {}

  detachTo(task: MessageSink): void {
    this.detached = task;
    for (const notice of this.notices.values()) task.send(notice);
    for (const request of this.held.splice(0)) task.send(request);
  }

  send(message: JsonRpcMessage): boolean {
    if (this.detached) return this.detached.send(message);
    if (isTaskNotice(message)) {
      this.notices.set(message.method, message);
      return true;
    }
    if (this.onInputBeforeDetach && isRequest(message)) {
      this.held.push(message);
      this.onInputBeforeDetach();
      return true;
    }
    if (isNotification(message) && message.method === "notifications/progress" && message.params?.progressToken === undefined) return true;
    return this.front.send(message);
  }
}

export interface TaskEvents {
  progress(params: Record<string, unknown>): void;
  /** The upstream runs the call as a task of its own (#15): which one, and how long it keeps it. */
  upstreamTask(params: Record<string, unknown>): void;
  /** A server→client request during the detached call; the task answers it (or refuses it) itself. */
  request(request: JsonRpcRequest): void;
}

/** Where a detached call's messages go: progress becomes statusMessage, requests become input. */
export class TaskSink implements MessageSink {
  constructor(private readonly events: TaskEvents) {}

  send(message: JsonRpcMessage): boolean {
    if (isRequest(message)) {
      this.events.request(message);
      return true;
    }
    if (isNotification(message) && message.method === "notifications/progress") this.events.progress(message.params ?? {});
    if (isQueuedNotice(message)) this.events.progress({ message: queueStatus(message.params?.ahead) });
    if (isNotification(message) && message.method === UPSTREAM_TASK_NOTICE) this.events.upstreamTask(message.params ?? {});
    // The upstream task's own statusMessage is the task's (#15).
    if (isNotification(message) && message.method === UPSTREAM_STATUS_NOTICE) this.events.progress({ message: message.params?.statusMessage });
    // Logging and other notifications have nobody to go to once detached (not supported for tasks, §3.9).
    return true;
  }
}

/** A task's statusMessage while its call waits for a free slot on its upstream (issue 14). */
function queueStatus(ahead: unknown): string {
  return typeof ahead === "number" ? `queued: ${ahead} ahead` : "running";
}
