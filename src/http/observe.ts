import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { LogContext } from "../observability/log-context.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { Wire } from "../observability/request-outcome.js";
import { activeSpan, tracingEnabled, withFrontSpan } from "../observability/tracing.js";
import type { JsonRpcMessage } from "../jsonrpc/message.js";
import { isLegacyVersion } from "../dialects/legacy/versions.js";
import { isModernVersion } from "../dialects/modern/wire.js";
import { outcomeOf, replyTag, type ReplyTag } from "../wire/reply-outcome.js";
import { isEventStream, whenStreamEnds, withSendBudget } from "./sse-lifetime.js";
import { RequestIdResponse } from "./request-id-response.js";

/** A caller's X-Request-Id is kept when it is a plain token; anything else gets a fresh id. */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Where the request's log context is kept for the routes (set before any other step runs), and
 * the outcome of the reply the route built (`keepReply`).
 */
export type ObservedEnv = { Variables: { logContext: LogContext; reply?: ReplyTag } };

/**
 * Observing one front request, in order: a request id (echoed as X-Request-Id and on every log
 * line written while serving it), a server span continuing the caller's `traceparent`, the count
 * of open SSE responses and the bound on what each holds unsent, the request's duration and
 * outcome (refusals included, since this runs before every other step), the tasks/get latency,
 * and a debug access line written once the answer is complete.
 *
 * The log context is kept on the request for the routes, which hand it on with the front request
 * to whatever writes a line about it (observability/log-context.ts).
 */
export function observeRequests(
  upstream: string,
  metrics: Metrics,
  logger: Logger,
  sseMaxBufferedBytes: number,
): <E extends ObservedEnv>(request: Context<E>, serve: () => Promise<Response>, before?: AnsweredBefore) => Promise<Response> {
  // Read once, as the direct path does: building a debug line's fields that no one writes cost
  // more than the line (docs/contributing/performance.md, the round of 2026-12-06, afternoon).
  const debug = logger.isLevelEnabled("debug");
  return (request, serve, before) => {
    const c = request as unknown as Context<ObservedEnv>;
    const context: LogContext = before?.context ?? { reqId: requestIdOf(c.req.header("x-request-id")) };
    c.set("logContext", context);
    const started = before?.started ?? performance.now();
    const spanned = tracingEnabled() ? () => inFrontSpan(c, upstream, serve) : serve;
    // A then rather than an async function: an await costs a promise more.
    return spanned().then((served) => {
      let response = served;
      const seconds = (performance.now() - started) / 1000;
      if (context.method === "tasks/get") metrics.tasksGet(upstream, seconds);
      const tag = replyTag(response) ?? c.get("reply");
      recordOperation(metrics, upstream, c.req.method, c.req.raw.headers, context, tag, response.status, started);
      setRequestId(c, response, context.reqId);
      // A reply tagged with its message or error is a plain body: its headers need not be read.
      if ((tag === undefined || tag instanceof Promise) && isEventStream(response)) {
        metrics.sseOpened();
        const reqId = context.reqId;
        const overflowed = () =>
          logger.warn({ reqId, upstream, sseMaxBufferedBytes }, "closed an SSE stream whose reader fell behind (http.sseMaxBufferedBytes)");
        response = withSendBudget(
          whenStreamEnds(response, () => metrics.sseClosed()),
          sseMaxBufferedBytes,
          overflowed,
        );
      }
      // `ms`: until the answer was complete. A streamed answer (a call held open on SSE, one that
      // detached into a task) is logged when its last message is sent; `streamedAfterMs` is when it turned into a stream.
      if (!debug) return response;
      if (tag instanceof Promise) {
        const status = response.status;
        void tag.then(() =>
          logger.debug({ ...context, upstream, status, ms: Math.round(performance.now() - started), streamedAfterMs: Math.round(seconds * 1000) }, "request"),
        );
      } else logger.debug({ ...context, upstream, status: response.status, ms: Math.round(seconds * 1000) }, "request");
      return response;
    });
  };
}

/**
 * A request the direct path (direct-path.ts) answered with a stream, handed to the general path
 * to be written and observed: its log context and start, so it is counted and logged once.
 */
export interface AnsweredBefore {
  response: Response;
  context: LogContext;
  started: number;
}

const answers = new WeakMap<IncomingMessage, AnsweredBefore>();

export function answeredBefore(req: IncomingMessage, answer: AnsweredBefore): void {
  answers.set(req, answer);
}

/** The answer the direct path handed over with this request, if it did. */
export function answerHandedOver(c: Context): AnsweredBefore | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && answers.get(incoming);
}

/** The caller's X-Request-Id when it is a plain token, else a fresh one. */
export function requestIdOf(given: string | undefined): string {
  return given && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The request in a server span continuing the caller's trace; only with a tracing SDK registered. */
function inFrontSpan(c: Context, upstream: string, serve: () => Promise<Response>): Promise<Response> {
  const attributes = { "http.request.method": c.req.method, "url.path": c.req.path, "taskgate.upstream": upstream };
  return withFrontSpan(`${c.req.method} ${c.req.path}`, c.req.raw.headers, attributes, async (span) => {
    const response = await serve();
    span.setAttribute("http.response.status_code", response.status);
    return response;
  });
}

/**
 * X-Request-Id on the reply. Served by @hono/node-server, it goes on the Node response, which
 * writes it with the headers the reply is written with (RequestIdResponse): reading the reply's
 * `headers` would turn its plain header object into a WHATWG Headers and back on every request.
 * Elsewhere (app.request in tests) on the Response itself.
 */
function setRequestId(c: Context, response: Response, reqId: string): void {
  const outgoing = (c.env as { outgoing?: { setHeader?: (name: string, value: string) => void; headersSent?: boolean } } | undefined)?.outgoing;
  if (outgoing instanceof RequestIdResponse && !outgoing.headersSent) outgoing.requestId = reqId;
  else if (outgoing?.setHeader && !outgoing.headersSent) outgoing.setHeader("x-request-id", reqId);
  else response.headers.set("x-request-id", reqId);
}

/**
 * `mcp_server_operation_duration_seconds` for one request: at once for a plain reply, when its
 * last message is sent for a streamed one. A request refused before its body was read counts
 * under its HTTP method, on the wire its headers name.
 */
export function recordOperation(
  metrics: Metrics,
  upstream: string,
  httpMethod: string,
  headers: Headers | undefined,
  context: LogContext,
  tag: ReplyTag | undefined,
  status: number,
  started: number,
): void {
  const method = context.method ?? httpMethod;
  const tool = context.tool ?? "";
  const wire = context.wire ?? (headers ? wireOfHeaders(headers) : "unknown");
  if (tag instanceof Promise) {
    void tag.then((message) => {
      const { outcome, errorType } = outcomeOf(message, 200);
      metrics.operation(upstream, method, tool, wire, outcome, errorType, (performance.now() - started) / 1000);
    });
    return;
  }
  const { outcome, errorType } = outcomeOf(tag, status);
  metrics.operation(upstream, method, tool, wire, outcome, errorType, (performance.now() - started) / 1000);
}

/**
 * The route's reply, remembered on the request: a step that touched the response before the
 * route ran (CORS sets its headers that way) makes hono re-wrap the route's Response, which then
 * no longer carries its tag (reply-outcome.ts).
 */
export function keepReply<E extends ObservedEnv>(c: Context<E>, response: Response): Response {
  const tag = replyTag(response);
  if (tag !== undefined) (c as unknown as Context<ObservedEnv>).set("reply", tag);
  return response;
}

function wireOfHeaders(headers: Headers): Wire {
  const version = headers.get("mcp-protocol-version") ?? undefined;
  if (isModernVersion(version)) return "modern";
  return headers.has("mcp-session-id") || (version !== undefined && isLegacyVersion(version)) ? "legacy" : "unknown";
}

/**
 * Once the body is decoded: the method (and tool) name the span and the log context, with the
 * attributes of the OpenTelemetry semantic conventions for MCP
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/).
 */
export function noteRequest(context: LogContext | undefined, message: JsonRpcMessage, wire: Wire, sessionId: string | undefined): void {
  if (!("method" in message)) return;
  const { method } = message;
  const name = method === "tools/call" ? message.params?.name : undefined;
  const tool = typeof name === "string" ? name : undefined;
  if (context) {
    context.method = method;
    context.wire = wire;
    if (tool !== undefined) context.tool = tool;
  }
  const span = activeSpan();
  if (!span) return;
  span.setAttribute("rpc.method", method);
  span.setAttribute("mcp.method.name", method);
  if (tool !== undefined) span.setAttribute("gen_ai.tool.name", tool);
  if (sessionId !== undefined) span.setAttribute("mcp.session.id", sessionId);
  const taskId = method.startsWith("tasks/") ? message.params?.taskId : undefined;
  if (typeof taskId === "string") span.setAttribute("taskgate.task.id", taskId);
}
