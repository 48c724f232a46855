import type { JsonRpcErrorObject, JsonRpcId, JsonRpcNotification, JsonRpcResponse } from "../jsonrpc/message.js";
import type { InitializeResultLike, OnBehalf, UpstreamConnector, UpstreamEvent, UpstreamRequest } from "./connector.js";
import type { UpstreamGeneration } from "./negotiate.js";
import type { SessionCore } from "./session-core.js";

/**
 * The part of every connector that is the session, not the transport: handed to the shared core.
 * Subclasses bring `start()` and `close()`, and create `core` with their own link.
 */
export abstract class CoreConnector implements UpstreamConnector {
  protected abstract readonly core: SessionCore;

  constructor(readonly name: string) {}

  abstract start(): Promise<void>;
  abstract close(options?: { keepSession?: boolean }): Promise<void>;

  session(): string | undefined {
    return undefined;
  }

  initializeResult(): InitializeResultLike | undefined {
    return this.core.initializeResult();
  }

  isReady(): boolean {
    return this.core.isReady();
  }

  lastError(): string | undefined {
    return this.core.lastError();
  }

  generation(): UpstreamGeneration | undefined {
    return this.core.generation();
  }

  request(req: UpstreamRequest): Promise<JsonRpcResponse> {
    return this.core.request(req);
  }

  notify(notification: Omit<JsonRpcNotification, "jsonrpc">, onBehalf?: OnBehalf): Promise<void> {
    return this.core.notify(notification, onBehalf);
  }

  respond(upstreamRequestId: JsonRpcId, outcome: { result: Record<string, unknown> } | { error: JsonRpcErrorObject }, onBehalf?: OnBehalf): Promise<void> {
    return this.core.respond(upstreamRequestId, outcome, onBehalf);
  }

  onEvent(listener: (event: UpstreamEvent) => void): void {
    this.core.onEvent(listener);
  }
}
