import type { LogContext } from "../../observability/log-context.js";
import { GatewayError } from "../../wire/errors.js";
import { CallReply, type Accepts } from "../../wire/reply.js";
import { isRequest, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { CallClient } from "../../upstream/caller.js";
import { callClientId } from "../passthrough/client-id.js";
import type { Relay } from "../../upstream/mux/relay.js";
import { modernResult, discoverResult, upstreamParams } from "./shape.js";
import { checkParamHeaders, type HeaderDeclaration } from "./param-headers.js";
import { jsonReply } from "../../wire/reply-outcome.js";
import type { ToolHeaders } from "./tool-headers.js";
import { MODERN_VERSIONS, validateModernRequest, type ModernHeaders } from "./wire.js";

export interface ModernRequest {
  message: JsonRpcMessage;
  accepts: Accepts;
  headers: ModernHeaders;
  /** Any request header by name (SEP-2243's Mcp-Param-* are looked up per tool). */
  header?: (name: string) => string | undefined;
  principal?: string;
  /** Forwarded upstream with this request's calls (http.forwardAuthorization); in memory only. */
  authorization?: string;
  /** What the lines about this request carry. */
  log?: LogContext;
}

/** What the modern front hands a method handler. */
export interface ModernCall {
  request: JsonRpcRequest;
  /** The request as the upstream gets it. */
  upstreamRequest: JsonRpcRequest;
  client: CallClient;
  accepts: Accepts;
  /** Whom the call's tasks are bound to (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md: checked on each task request). */
  principal: string;
  /** What the lines about this request (and a task it makes) carry. */
  log?: LogContext;
}

/** Without auth the modern wire has no caller identity: the unguessable task id is the only handle (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md). */
export const ANONYMOUS = "anonymous";

export type MethodHandler = (call: ModernCall, front: ModernFront) => Promise<Response>;

/**
 * A method answered with one plain message, never a stream nor a call upstream (tasks/get,
 * tasks/update, tasks/cancel): the direct path (http/direct-path.ts) writes the message itself
 * rather than a Response built from it.
 */
export interface MessageHandler {
  answer(call: ModernCall): Promise<JsonRpcMessage>;
}

/**
 * The modern-era (2026-07-28) front side: stateless, every request carries its own `_meta`.
 * Validates the headers and `_meta`, answers `server/discover`, hands task methods to their
 * handlers and relays the rest with `resultType` and caching hints added.
 */
export class ModernFront {
  constructor(
    private readonly relay: Relay,
    private readonly handlers: ReadonlyMap<string, MethodHandler | MessageHandler>,
    readonly keepAliveMs: number,
    private readonly toolHeaders?: ToolHeaders,
  ) {}

  /** Refusals of the request itself are thrown at once; what the method answers comes as the promise. */
  post(req: ModernRequest): Promise<Response> {
    const { message } = req;
    // Notifications carry nothing taskgate acts on here (on HTTP, closing a stream is the cancel signal).
    if (!isRequest(message)) {
      if ("method" in message) return Promise.resolve(new Response(null, { status: 202 }));
      throw new GatewayError("invalid_request", "there are no server-to-client requests to answer on protocol 2026-07-28");
    }
    const capabilities = validateModernRequest(message, req.headers);
    // Answered from memory: no call (client id, upstream copy of the request) is built for it.
    if (message.method === "server/discover") return Promise.resolve(this.discover(message));
    if (message.method === "tools/call") {
      const checking = this.checkToolHeaders(message, req.header);
      if (checking) return checking.then(() => this.handle(req, message, capabilities));
    }
    return this.handle(req, message, capabilities);
  }

  /** Whether answer() serves this method (it has a MessageHandler). */
  answers(method: string): boolean {
    const handler = this.handlers.get(method);
    return handler !== undefined && typeof handler !== "function";
  }

  /**
   * What post() answers for a method with a MessageHandler, as the message; undefined for any other
   * request, which post() serves. A refusal of the request itself is thrown at once, as by post().
   */
  answer(req: ModernRequest): Promise<JsonRpcMessage> | undefined {
    const { message } = req;
    if (!isRequest(message)) return undefined;
    const handler = this.handlers.get(message.method);
    if (handler === undefined || typeof handler === "function") return undefined;
    return handler.answer(this.callOf(req, message, validateModernRequest(message, req.headers)));
  }

  private handle(req: ModernRequest, message: JsonRpcRequest, capabilities: Record<string, unknown>): Promise<Response> {
    const call = this.callOf(req, message, capabilities);
    const handler = this.handlers.get(message.method);
    if (handler === undefined) return this.passthrough(call);
    return typeof handler === "function" ? handler(call, this) : handler.answer(call).then(jsonReply);
  }

  private callOf(req: ModernRequest, message: JsonRpcRequest, capabilities: Record<string, unknown>): ModernCall {
    const client: CallClient = { sessionId: callClientId("m:"), capabilities };
    if (req.authorization !== undefined) client.authorization = req.authorization;
    return new Call(message, client, req.accepts, req.principal ?? ANONYMOUS, req.log);
  }

  /** Relay to the upstream; `resultType` and caching hints added to what comes back. */
  passthrough(call: ModernCall): Promise<Response> {
    const reply = new CallReply(call.accepts, this.keepAliveMs);
    const work = this.relay.call(call.client, call.upstreamRequest, noServerRequests(reply)).then((r) => this.shape(call.request, r));
    return reply.respond(work);
  }

  shape(request: JsonRpcRequest, response: JsonRpcResponse): JsonRpcResponse {
    if ("error" in response) return { ...response, id: request.id };
    const serverInfo = this.relay.connector.initializeResult()?.serverInfo;
    return { jsonrpc: "2.0", id: request.id, result: modernResult(request.method, response.result, serverInfo) };
  }

  /**
   * SEP-2243: the tool's `x-mcp-header` arguments against their `Mcp-Param-*` headers (400, -32020).
   * Undefined when checked at once, from a fresh read of the tools' declarations.
   */
  private checkToolHeaders(request: JsonRpcRequest, header: ModernRequest["header"]): Promise<void> | undefined {
    const name = request.params?.name;
    if (!this.toolHeaders || typeof name !== "string") return undefined;
    const check = (declarations: readonly HeaderDeclaration[]) => {
      if (declarations.length > 0) checkParamHeaders(declarations, request.params?.arguments, header ?? (() => undefined));
    };
    const now = this.toolHeaders.now(name);
    if (now === undefined) return this.toolHeaders.of(name).then(check);
    check(now);
    return undefined;
  }

  private discover(request: JsonRpcRequest): Response {
    const init = this.relay.connector.initializeResult();
    if (!init) throw new GatewayError("upstream_unavailable", this.relay.connector.lastError() ?? `'${this.relay.connector.name}' is not initialized`);
    return jsonReply({ jsonrpc: "2.0", id: request.id, result: discoverResult(init, MODERN_VERSIONS) });
  }
}

/**
 * A ModernCall as a class: its upstream copy is made on first use (the task methods answered from
 * the store never send anything upstream), by a getter on the prototype, which an object literal
 * with a getter of its own would build per request.
 */
class Call implements ModernCall {
  private upstreamCopy: JsonRpcRequest | undefined;

  constructor(
    readonly request: JsonRpcRequest,
    readonly client: CallClient,
    readonly accepts: Accepts,
    readonly principal: string,
    readonly log: LogContext | undefined,
  ) {}

  get upstreamRequest(): JsonRpcRequest {
    this.upstreamCopy ??= { ...this.request, params: upstreamParams(this.request.method, this.request.params) };
    return this.upstreamCopy;
  }
}

/**
 * 2026-07-28 has no server→client requests (they became MRTR): a request the upstream makes is
 * refused to it rather than sent to a client that could not answer it.
 */
export function noServerRequests(sink: MessageSink): MessageSink {
  return { send: (message) => (isRequest(message) ? false : sink.send(message)) };
}
