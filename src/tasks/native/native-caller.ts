import { failure, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { RPC } from "../../jsonrpc/codes.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { UpstreamTaskRef, UpstreamTasks } from "../../upstream/native-tasks/upstream-tasks.js";
import type { CallClient, CallOptions, CancelOptions, StreamResume, UpstreamCaller } from "../../upstream/caller.js";
import { BridgedCall } from "./bridged-call.js";

/**
 * The caller of tools that run as the upstream's own tasks: each tools/call becomes a task
 * upstream (`UpstreamTasks.start`) and is followed to its end by a BridgedCall; the call's
 * answer is the upstream task's. Everything else, and every call that is not one of its own,
 * goes to `inner` (the relay over the upstream session).
 */
export class NativeCaller implements UpstreamCaller {
  private readonly running = new Map<string, BridgedCall>();

  constructor(
    private readonly inner: UpstreamCaller,
    readonly tasks: UpstreamTasks,
    private readonly clock: () => number,
  ) {}

  call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    if (request.method !== "tools/call") return this.inner.call(client, request, sink, options);
    return this.track(client, request, sink, options, (bridged) => bridged.run());
  }

  /** Follow an upstream task another replica started, as the call `request` (its task id was stored). */
  resume(client: CallClient, request: JsonRpcRequest, ref: UpstreamTaskRef, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    return this.track(client, request, sink, options, (bridged) => bridged.resume(ref));
  }

  /** A plain call's response stream, resumed by the caller underneath (its tools/call never ran as an upstream task). */
  resumeStream(client: CallClient, request: JsonRpcRequest, position: StreamResume, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    if (!this.inner.resumeStream)
      return Promise.resolve(failure(request.id, { code: RPC.INTERNAL_ERROR, message: "this upstream resumes no response stream" }));
    return this.inner.resumeStream(client, request, position, sink, options);
  }

  /**
   * `abandon: false`: ask the upstream to cancel its task and keep following it to its end.
   * Otherwise also stop following now; `keepUpstreamTask` stops following only (another
   * replica takes the task over).
   */
  async cancel(client: CallClient, frontId: JsonRpcId, reason?: string, options: CancelOptions = {}): Promise<void> {
    const bridged = this.running.get(keyOf(client.sessionId, frontId));
    if (!bridged) return this.inner.cancel(client, frontId, reason, options);
    bridged.cancel({ cancelUpstream: options.keepUpstreamTask !== true, abandon: options.abandon !== false });
  }

  async answer(client: CallClient, response: JsonRpcResponse): Promise<boolean> {
    for (const bridged of this.running.values()) if (bridged.client.sessionId === client.sessionId && (await bridged.answer(response))) return true;
    return this.inner.answer(client, response);
  }

  /** A front session ended: its plain calls' upstream tasks are cancelled. */
  endSession(client: CallClient): void {
    for (const bridged of this.running.values()) if (bridged.client.sessionId === client.sessionId) bridged.cancel({ cancelUpstream: true, abandon: true });
  }

  private track(
    client: CallClient,
    request: JsonRpcRequest,
    sink: MessageSink,
    options: CallOptions,
    go: (bridged: BridgedCall) => Promise<JsonRpcResponse>,
  ): Promise<JsonRpcResponse> {
    const key = keyOf(client.sessionId, request.id);
    if (this.running.has(key))
      return Promise.resolve({
        jsonrpc: "2.0",
        id: request.id,
        error: { code: RPC.INVALID_REQUEST, message: `request id ${String(request.id)} is already in flight` },
      });
    const bridged = new BridgedCall(this.tasks, client, request, sink, options, this.clock);
    this.running.set(key, bridged);
    return go(bridged).finally(() => this.running.delete(key));
  }
}

function keyOf(sessionId: string, id: JsonRpcId): string {
  return `${sessionId}\u0000${typeof id}:${String(id)}`;
}
