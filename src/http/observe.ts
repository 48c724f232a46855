import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { withLogContext, type LogContext } from "../observability/log-context.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { activeSpan, withFrontSpan } from "../observability/tracing.js";
import { isEventStream, whenStreamEnds } from "./sse-lifetime.js";

/** A caller's X-Request-Id is kept when it is a plain token; anything else gets a fresh id. */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Where the request's log context is kept for the routes (set before any other step runs). */
export type ObservedEnv = { Variables: { logContext: LogContext } };

/**
 * Observing one front request, in order: a request id (echoed as X-Request-Id and on every log
 * line written while serving it), a server span continuing the caller's `traceparent`, the count
 * of open SSE responses, the tasks/get latency, and a debug access line.
 *
 * The context follows the request's async work (AsyncLocalStorage) only when lines at info or
 * below are written: those are the lines written away from the request's own stack ("task
 * created", "task ended", audit). On Node 20 entering an AsyncLocalStorage turns on a promise hook
 * for every promise of the process, about a quarter of the CPU of a request answered from memory;
 * at warn and above the routes put the request id on their own error lines instead (README:
 * Observability).
 */
export function observeRequests(upstream: string, metrics: Metrics, logger: Logger): MiddlewareHandler<ObservedEnv> {
  const follow = logger.isLevelEnabled("info");
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const context: LogContext = { reqId: given && REQUEST_ID.test(given) ? given : randomUUID() };
    c.set("logContext", context);
    const started = performance.now();
    const attributes = { "http.request.method": c.req.method, "url.path": c.req.path, "taskgate.upstream": upstream };
    const serve = () =>
      withFrontSpan(`${c.req.method} ${c.req.path}`, c.req.raw.headers, attributes, async (span) => {
        await next();
        span.setAttribute("http.response.status_code", c.res.status);
      });
    await (follow ? withLogContext(context, serve) : serve());
    const seconds = (performance.now() - started) / 1000;
    if (context.method === "tasks/get") metrics.tasksGet(upstream, seconds);
    c.res.headers.set("x-request-id", context.reqId);
    if (isEventStream(c.res)) {
      metrics.sseOpened();
      c.res = whenStreamEnds(c.res, () => metrics.sseClosed());
    }
    logger.debug({ ...context, upstream, status: c.res.status, ms: Math.round(seconds * 1000) }, "request");
  };
}

/** Once the body is decoded: the method names the span and the log context. */
export function noteMethod(context: LogContext | undefined, method: string | undefined): void {
  if (method === undefined) return;
  if (context) context.method = method;
  activeSpan()?.setAttribute("rpc.method", method);
}
