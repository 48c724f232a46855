import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { JsonRpcId, JsonRpcMessage } from "../../src/jsonrpc/message.js";
import type { Logger } from "../../src/observability/logger.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { CoreConnector } from "../../src/upstream/core-connector.js";
import { SessionCore } from "../../src/upstream/session-core.js";
import { createDemoServer } from "../../src/demo/create-server.js";

/**
 * The SDK side of an in-process link: what the demo server sends arrives at the connector's
 * session core with the request it relates to, as an HTTP upstream's per-call SSE stream says.
 */
class ServerSide implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly deliver: (message: JsonRpcMessage, relatedTo?: JsonRpcId) => void) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const relatedTo = options?.relatedRequestId;
    queueMicrotask(() => this.deliver(message as JsonRpcMessage, relatedTo));
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/**
 * An upstream connector whose server is the project's demo server in this very process: the
 * real SDK `Server`, the real session core (handshake, ids, pending map), no process and no socket.
 * Configure the upstream as `http` so questions are tied to their call by `relatedTo`.
 */
export class InProcessConnector extends CoreConnector {
  protected readonly core: SessionCore;
  private server: ServerSide | undefined;
  readonly log: string[] = [];

  constructor(name: string, logger: Logger) {
    super(name);
    this.core = new SessionCore({ name, logger, initializeTimeoutMs: 10_000 }, { send: (m) => this.write(m) });
  }

  async start(): Promise<void> {
    const side = new ServerSide((message, relatedTo) => this.core.receive(message, relatedTo));
    await createDemoServer((line) => this.log.push(line)).connect(side);
    this.server = side;
    await this.core.handshake();
  }

  async close(): Promise<void> {
    const side = this.server;
    this.server = undefined;
    this.core.markDown(new UpstreamError(`upstream '${this.name}' closed`, "closed"), { failPending: true });
    await side?.close();
  }

  private async write(message: JsonRpcMessage): Promise<void> {
    const side = this.server;
    if (!side) throw new UpstreamError(`upstream '${this.name}' is closed`, "closed");
    queueMicrotask(() => side.onmessage?.(message as JSONRPCMessage));
  }
}
