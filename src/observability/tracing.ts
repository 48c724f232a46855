import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";

/**
 * Spans through the OpenTelemetry API only. Without a registered SDK (no OTLP endpoint configured,
 * see tracing-sdk.ts) the API is a no-op: spans cost next to nothing and no header is injected.
 */
const tracer = () => trace.getTracer("taskgate");

/**
 * Run `fn` inside a new active span, ended when `fn` settles. Work started inside it (a detached
 * upstream call, a store write) stays in its context, so one trace shows the whole task.
 */
export function traced<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
  return tracer().startActiveSpan(name, { attributes, kind }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** W3C `traceparent`/`tracestate` of the active span into request headers to an HTTP upstream. */
export function injectTraceContext(headers: Headers): void {
  propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
}

/**
 * Serve one front request inside a server span that continues the caller's trace (its
 * `traceparent`, when it sent one).
 */
export function withFrontSpan<T>(name: string, headers: Headers, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = propagation.extract(context.active(), headers, {
    get: (carrier, key) => carrier.get(key) ?? undefined,
    keys: (carrier) => [...carrier.keys()],
  });
  return context.with(parent, () => traced(name, attributes, fn, SpanKind.SERVER));
}

/** The active span, to name or annotate it once the JSON-RPC method is known. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}
