import { context, INVALID_SPAN_CONTEXT, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";

/**
 * Spans through the OpenTelemetry API only. Without a registered SDK (no OTLP endpoint configured,
 * see tracing-sdk.ts) the API is a no-op: spans cost next to nothing and no header is injected.
 */
const tracer = () => trace.getTracer("taskgate");

/**
 * Set once the SDK is registered (tracing-sdk.ts). Until then the API's spans and context are
 * no-ops, so `traced` and `withFrontSpan` call straight through with a non-recording span: no
 * async wrapper, which a held task call would keep suspended (with its closures and promise) for
 * as long as the call runs, and no per-request span or context work. Process-wide, like the
 * OpenTelemetry registration it mirrors.
 */
let sdkRegistered = false;
const NOOP_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export function noteTracingSdkRegistered(): void {
  sdkRegistered = true;
}

/**
 * Run `fn` inside a new active span, ended when `fn` settles. Work started inside it (a detached
 * upstream call, a store write) stays in its context, so one trace shows the whole task.
 */
/** Whether spans are recorded at all: without an SDK a caller can skip building their attributes. */
export function tracingEnabled(): boolean {
  return sdkRegistered;
}

export function traced<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
  if (!sdkRegistered) return fn(NOOP_SPAN);
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
export function injectTraceContext(headers: Record<string, string>): void {
  propagation.inject(context.active(), headers);
}

/**
 * Serve one front request inside a server span that continues the caller's trace (its
 * `traceparent`, when it sent one).
 */
export function withFrontSpan<T>(name: string, headers: Headers, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!sdkRegistered) return fn(NOOP_SPAN);
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
