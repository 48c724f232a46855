import { RPC } from "../../jsonrpc/codes.js";
import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { LogContext } from "../../observability/log-context.js";
import { GatewayError } from "../../wire/errors.js";
import { CallReply, type Accepts } from "../../wire/reply.js";
import { failureResponse } from "../../wire/reply-outcome.js";
import type { UpstreamCaller } from "../../upstream/caller.js";
import type { NativeCaller } from "../../tasks/native/native-caller.js";
import { SseStream } from "../../wire/sse.js";
import { sessionClient } from "../passthrough/client-id.js";
import type { FrontClient, Relay } from "../../upstream/mux/relay.js";
import { TASKS_2025_VERSION, type Tasks2025Handlers } from "../tasks-2025-11-25/handlers.js";
import { TASKS_2025_CAPABILITY } from "../tasks-2025-11-25/render.js";
import { serveLegacy, takesLegacy } from "../unaware/legacy.js";
import type { Unaware } from "../unaware/unaware.js";
import type { Sessions } from "../../sessions/sessions.js";
import type { SessionRecord } from "../../store/contract.js";
import { isLegacyVersion, negotiateVersion } from "./versions.js";

const SESSION_HEADER = "mcp-session-id";

/** Which part of post() serves a request in its session (LegacyFront.routeOf). */
type Route = { to: "task-unaware"; unaware: Unaware } | { to: "tasks-2025"; handlers: Tasks2025Handlers } | { to: "hidden" } | { to: "relayed" };
const HIDDEN: Route = { to: "hidden" };
const RELAYED: Route = { to: "relayed" };

export interface LegacyRequest {
  message: JsonRpcMessage;
  accepts: Accepts;
  sessionId?: string;
  protocolVersion?: string;
  signal?: AbortSignal;
  principal?: string;
  /** Forwarded upstream with this request's calls (http.forwardAuthorization); never kept in the session. */
  authorization?: string;
  /** What the lines about this request (and a task it makes) carry. */
  log?: LogContext;
}

/**
 * The legacy-era front side (2024-11-05 … 2025-11-25) of one upstream: `initialize` answered from
 * the upstream's cached result with a session taskgate mints, everything else relayed.
 */
export class LegacyFront {
  constructor(
    private readonly sessions: Sessions,
    private readonly relay: Relay,
    private readonly keepAliveMs: number,
    private readonly tasks2025?: Tasks2025Handlers,
    /** tasks.unawareClients: handle: long calls of callers without task support. */
    private readonly unaware?: Unaware,
    /** The bridge to the upstream's own tasks: a plain call of a tool it runs only as a task waits on it. */
    private readonly native?: NativeCaller,
  ) {}

  /** Not an async function: a request in a session this replica holds makes no promise before its answer's. */
  post(req: LegacyRequest): Promise<Response> {
    const { message } = req;
    if (isRequest(message) && message.method === "initialize") return this.initialize(message, req.accepts, req.principal);
    const session = this.sessions.cached(req.sessionId, req.principal);
    if (session) return this.postIn(session, req);
    return this.sessions.require(req.sessionId, req.principal).then((read) => this.postIn(read, req));
  }

  private postIn(session: SessionRecord, req: LegacyRequest): Promise<Response> {
    const { message } = req;
    try {
      if (req.protocolVersion !== undefined && !isLegacyVersion(req.protocolVersion))
        throw new GatewayError("unsupported_protocol_version", req.protocolVersion);
      if (isRequest(message)) return this.request(session, message, req);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.other(session, message, req);
  }

  private request(session: SessionRecord, message: JsonRpcRequest, req: LegacyRequest): Promise<Response> {
    const route = this.routeOf(session, message);
    if (route.to === "task-unaware")
      return serveLegacy(route.unaware, this.relay, session, message, {
        accepts: req.accepts,
        keepAliveMs: this.keepAliveMs,
        log: req.log,
        ...(req.authorization !== undefined ? { authorization: req.authorization } : {}),
      });
    if (route.to === "tasks-2025") {
      // The HTTP step gives a signal to tasks/result alone, the one method that waits on it.
      return route.handlers.handle(session, message, req.accepts, req.signal, req.authorization, req.log);
    }
    // The upstream's tasks are taskgate's own session's, never a client's to read.
    if (route.to === "hidden")
      return Promise.resolve(
        failureResponse({ jsonrpc: "2.0", id: message.id, error: { code: RPC.METHOD_NOT_FOUND, message: `Method not found: ${message.method}` } }),
      );
    const client = sessionClient(session, req.authorization);
    const reply = new CallReply(req.accepts, this.keepAliveMs);
    const caller = this.callerOf(message);
    return reply.respond(caller instanceof Promise ? caller.then((c) => c.call(client, message, reply)) : caller.call(client, message, reply));
  }

  /** A notification, or the client's answer to a question. */
  private async other(session: SessionRecord, message: JsonRpcMessage, req: LegacyRequest): Promise<Response> {
    const client = sessionClient(session, req.authorization);
    if (isNotification(message)) await this.onNotification(client, message);
    else if (!(await this.tasks2025?.answer(session, message as JsonRpcResponse))) await (this.native ?? this.relay).answer(client, message as JsonRpcResponse);
    return new Response(null, { status: 202 });
  }

  /**
   * The session post() answers this request in with one plain message (Tasks2025Handlers.taskReply);
   * undefined when post() serves it otherwise. Throws what post() throws for an unknown session.
   */
  async answerable(req: LegacyRequest): Promise<SessionRecord | undefined> {
    const { message } = req;
    if (!isRequest(message) || message.method === "initialize" || !this.tasks2025) return undefined;
    const session = await this.sessions.require(req.sessionId, req.principal);
    if (req.protocolVersion !== undefined && !isLegacyVersion(req.protocolVersion)) return undefined;
    const route = this.routeOf(session, message);
    return route.to === "tasks-2025" && route.handlers.answers(session, message.method) ? session : undefined;
  }

  /**
   * Which part of post() serves a request in its session, in the one order post() and
   * answerable() both follow: a task-unaware session's request as such, the 2025-11-25 tasks'
   * own methods, any other `tasks/` method refused, and everything else relayed.
   */
  private routeOf(session: SessionRecord, message: JsonRpcRequest): Route {
    if (takesLegacy(this.unaware, session, message)) return { to: "task-unaware", unaware: this.unaware };
    if (this.tasks2025?.handles(session, message.method)) return { to: "tasks-2025", handlers: this.tasks2025 };
    return message.method.startsWith("tasks/") ? HIDDEN : RELAYED;
  }

  /** What post() answers, as the message, in a session answerable() gave. */
  answer(session: SessionRecord, request: JsonRpcRequest, log?: LogContext): Promise<JsonRpcMessage> {
    return this.tasks2025!.taskReply(session, request, log);
  }

  /** The session's standing server→client stream (notifications not tied to a call). */
  async get(accepts: Accepts, sessionId: string | undefined, principal?: string): Promise<Response> {
    if (!accepts.sse) throw new GatewayError("not_acceptable", "GET needs Accept: text/event-stream");
    const session = await this.sessions.require(sessionId, principal);
    const stream = new SseStream(this.keepAliveMs);
    if (!this.relay.streams.attach(session.id, stream)) throw new GatewayError("stream_conflict");
    const unwatch = await this.tasks2025?.watch(session, stream).catch(() => undefined);
    stream.onClose(() => {
      this.relay.streams.detach(session.id, stream);
      void unwatch?.();
    });
    return stream.response({ [SESSION_HEADER]: session.id });
  }

  async delete(sessionId: string | undefined, principal?: string): Promise<Response> {
    const session = await this.sessions.end(sessionId, principal);
    await this.ended(sessionClient(session));
    return new Response(null, { status: 200 });
  }

  /** What this replica holds for its sessions, and how it lets go of it (sessions/session-ends.ts). */
  readonly holder = {
    held: () => this.relay.streams.heldSessions(),
    ended: (sessionId: string) => this.ended({ sessionId, capabilities: {} }),
  };

  /** The session ended, however it did: its calls stop and its subscriptions go, here and upstream. */
  private async ended(client: FrontClient): Promise<void> {
    this.native?.endSession(client);
    await this.relay.endSession(client);
  }

  private async initialize(message: JsonRpcRequest, accepts: Accepts, principal: string | undefined): Promise<Response> {
    const upstream = this.relay.connector.initializeResult();
    if (!upstream) throw new GatewayError("upstream_unavailable", this.relay.connector.lastError() ?? `'${this.relay.connector.name}' is not initialized`);
    const params = message.params ?? {};
    const session = await this.sessions.open(
      {
        protocolVersion: negotiateVersion(params.protocolVersion),
        clientCapabilities: asRecord(params.capabilities),
        clientInfo: asRecord(params.clientInfo),
      },
      principal,
    );
    // Tasks exist only in 2025-11-25 sessions (the 2025-11-25 tasks); older versions see the upstream as it is.
    const { tasks: _upstreamTasks, ...upstreamCaps } = upstream.capabilities;
    const capabilities =
      this.tasks2025 && session.protocolVersion === TASKS_2025_VERSION ? { ...upstreamCaps, tasks: TASKS_2025_CAPABILITY } : upstream.capabilities;
    const result: Record<string, unknown> = {
      protocolVersion: session.protocolVersion,
      capabilities,
      serverInfo: upstream.serverInfo,
    };
    if (upstream.instructions !== undefined) result.instructions = upstream.instructions;
    const reply = new CallReply(accepts, this.keepAliveMs, { [SESSION_HEADER]: session.id });
    return reply.respond(Promise.resolve({ jsonrpc: "2.0", id: message.id, result }));
  }

  /** A tool the upstream runs only as its own task goes through the bridge; the caller waits. The relay at once when there is no bridge. */
  private callerOf(request: JsonRpcRequest): UpstreamCaller | Promise<UpstreamCaller> {
    const native = this.native;
    if (!native || request.method !== "tools/call") return this.relay;
    return native.tasks.support(String(request.params?.name ?? "")).then(
      (support) => (support === "required" ? native : this.relay),
      () => this.relay,
    );
  }

  private async onNotification(client: FrontClient, message: JsonRpcNotification): Promise<void> {
    if (message.method === "notifications/initialized") return; // taskgate made the upstream handshake itself
    if (message.method === "notifications/cancelled") {
      const { requestId, reason } = message.params ?? {};
      if (typeof requestId === "string" || typeof requestId === "number") {
        await (this.native ?? this.relay).cancel(client, requestId, typeof reason === "string" ? reason : undefined);
        await this.unaware?.cancelWaiting(client.sessionId, requestId, typeof reason === "string" ? reason : undefined);
      }
      return;
    }
    await this.relay.notify(message);
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
