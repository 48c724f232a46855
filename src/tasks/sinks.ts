import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from "../jsonrpc/message.js";
import type { MessageSink } from "../jsonrpc/sink.js";
import { QUEUED_NOTICE, STREAM_NOTICE } from "../upstream/caller.js";
import { isBridgeNotice } from "./native/notices.js";

/** A notice for the task a call may become (queue place, upstream task, stream position): never for the client. */
function isTaskNotice(message: JsonRpcMessage): message is JsonRpcNotification {
  return isNotification(message) && (message.method === QUEUED_NOTICE || message.method === STREAM_NOTICE || isBridgeNotice(message.method));
}

/**
 * The sink of a call that may detach: first the client's own reply, then the task. Progress the
 * engine asked for on the client's behalf (no token of the client's) never reaches the client.
 */
export class SwitchSink implements MessageSink {
  private detached?: MessageSink;
  private readonly held: JsonRpcRequest[] = [];
  /** The latest notice of each kind (queue place, upstream task and status, stream position: told once), for the task it may become. */
  private notices?: Map<string, JsonRpcMessage>;

  /**
   * `onInputBeforeDetach` set: a server→client request before the call detached is held and the
   * engine told, which parks the call (an MRTR round, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr; the front wire cannot carry
   * the request itself); the held request then goes to the parked call's sink. Unset: it goes to
   * the front like everything else.
   */
  constructor(
    private front: MessageSink | undefined,
    private onInputBeforeDetach?: () => void,
  ) {}

  /**
   * From now on everything goes to the task. The relay keeps this sink as long as the call runs:
   * it lets go of the client's reply (and what that holds of the finished HTTP exchange).
   */
  detachTo(task: MessageSink): void {
    this.detached = task;
    this.front = undefined;
    this.onInputBeforeDetach = undefined;
    for (const notice of this.notices?.values() ?? []) task.send(notice);
    this.notices = undefined;
    for (const request of this.held.splice(0)) task.send(request);
  }

  send(message: JsonRpcMessage): boolean {
    if (this.detached) return this.detached.send(message);
    if (isTaskNotice(message)) {
      (this.notices ??= new Map()).set(message.method, message);
      return true;
    }
    if (this.onInputBeforeDetach && isRequest(message)) {
      this.held.push(message);
      this.onInputBeforeDetach();
      return true;
    }
    if (isNotification(message) && message.method === "notifications/progress" && message.params?.progressToken === undefined) return true;
    return this.front?.send(message) ?? false;
  }
}
