import {
  failure,
  isRequest,
  isResponse,
  success,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import type { OnBehalf, UpstreamEvent } from "./connector.js";
import type { PendingRequests } from "./pending.js";
import { RPC } from "../jsonrpc/codes.js";

interface Sender {
  send(message: JsonRpcMessage, onBehalf?: OnBehalf): Promise<void>;
}

/**
 * What the upstream sends us: responses settle the pending map, everything else becomes an
 * `UpstreamEvent`. Also remembers which server→client requests are still open, so each is
 * answered at most once and never into a later session that did not ask.
 */
export class Inbound {
  listener: ((event: UpstreamEvent) => void) | undefined;
  private readonly asked = new Map<string, JsonRpcId>();

  constructor(
    private readonly logger: Logger,
    private readonly pending: PendingRequests,
    private readonly sender: Sender,
    private readonly isReady: () => boolean,
  ) {}

  /** `session`: it came from another replica's upstream session, which numbers its requests apart. */
  receive(message: JsonRpcMessage, relatedTo?: JsonRpcId, session?: string): void {
    if (isResponse(message)) return this.onResponse(message);
    if (isRequest(message)) return this.onRequest(message, relatedTo, session);
    this.onNotification(message, relatedTo, session);
  }

  /** Unknown, already answered, cancelled or from a lost session: dropped, so retries are safe. */
  async respond(id: JsonRpcId, response: JsonRpcResponse, onBehalf?: OnBehalf): Promise<void> {
    if (!this.asked.delete(keyOf(id, onBehalf?.session))) {
      this.logger.debug({ upstreamRequestId: id }, "dropped an answer to an upstream request that is no longer open");
      return;
    }
    await this.sender.send(response, onBehalf);
  }

  forgetAsked(): void {
    this.asked.clear();
  }

  emit(event: UpstreamEvent): void {
    try {
      this.listener?.(event);
    } catch (err) {
      this.logger.error({ err }, "upstream event listener threw");
    }
  }

  private onResponse(response: JsonRpcResponse): void {
    if (this.pending.settle(response)) return;
    if (response.id === null) this.logger.warn({ error: "error" in response ? response.error : undefined }, "upstream reported an error without an id");
    else this.logger.debug({ upstreamId: response.id }, "late response nobody waits for (aborted or timed out)");
  }

  private onRequest(request: JsonRpcRequest, relatedTo: JsonRpcId | undefined, session: string | undefined): void {
    // ping is about this one connection, not about any front client: answer it here.
    if (request.method === "ping") return this.answer(success(request.id, {}));
    if (!this.isReady() || this.listener === undefined) {
      const message = "taskgate cannot take requests from this upstream right now (session not ready)";
      return this.answer(failure(request.id, { code: RPC.INTERNAL_ERROR, message }));
    }
    this.asked.set(keyOf(request.id, session), request.id);
    this.emit({ kind: "request", message: request, ...related(relatedTo) });
  }

  private onNotification(notification: JsonRpcNotification, relatedTo: JsonRpcId | undefined, session: string | undefined): void {
    const cancelled = notification.method === "notifications/cancelled" ? notification.params?.requestId : undefined;
    if (typeof cancelled === "string" || typeof cancelled === "number") this.asked.delete(keyOf(cancelled, session));
    this.emit({ kind: "notification", message: notification, ...related(relatedTo) });
  }

  private answer(response: JsonRpcResponse): void {
    this.sender.send(response).catch((err: unknown) => this.logger.warn({ err }, "could not answer the upstream"));
  }
}

/** No `relatedTo` key at all when the transport does not know (stdio). */
function related(relatedTo: JsonRpcId | undefined): { relatedTo?: JsonRpcId } {
  return relatedTo === undefined ? {} : { relatedTo };
}

/** 1 and "1" are different JSON-RPC ids; another replica's session numbers its requests on its own. */
function keyOf(id: JsonRpcId, session?: string): string {
  return session === undefined ? `${typeof id}:${id}` : `${session}\u0000${typeof id}:${id}`;
}
