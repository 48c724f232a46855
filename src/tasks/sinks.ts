import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { QUEUED_NOTICE } from "./caller.js";

function isQueuedNotice(message: JsonRpcMessage): message is JsonRpcNotification {
  return isNotification(message) && message.method === QUEUED_NOTICE;
}

/**
 * The sink of a call that may detach: first the client's own reply, then the task. Progress the
 * engine asked for on the client's behalf (no token of the client's) never reaches the client.
 */
export class SwitchSink implements MessageSink {
  private detached?: MessageSink;
  private readonly held: JsonRpcRequest[] = [];
  /** Where the call stands in its upstream's queue, for the task it may become. */
  private lastQueued?: JsonRpcMessage;

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
    if (this.lastQueued) task.send(this.lastQueued);
    for (const request of this.held.splice(0)) task.send(request);
  }

  send(message: JsonRpcMessage): boolean {
    if (this.detached) return this.detached.send(message);
    if (isQueuedNotice(message)) {
      this.lastQueued = message;
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
    // Logging and other notifications have nobody to go to once detached (not supported for tasks, §3.9).
    return true;
  }
}

/** A task's statusMessage while its call waits for a free slot on its upstream (issue 14). */
function queueStatus(ahead: unknown): string {
  return typeof ahead === "number" ? `queued: ${ahead} ahead` : "running";
}
