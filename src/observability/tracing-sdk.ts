import type { Logger } from "./logger.js";
import { displayUrl } from "../util/redact-url.js";
import { noteTracingSdkRegistered } from "./tracing.js";

export interface TracingOptions {
  /** OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. Undefined: tracing stays off. */
  otlpEndpoint?: string;
  serviceName: string;
  headers: Record<string, string>;
}

/**
 * Register the OpenTelemetry SDK with an OTLP/HTTP (JSON) exporter, only when an endpoint is
 * configured: the SDK is imported lazily, so a gateway without tracing never loads it. Returns the
 * function that flushes and stops it (on shutdown, so the last spans are not lost).
 */
export async function startTracing(options: TracingOptions, replicaId: string, logger: Logger): Promise<() => Promise<void>> {
  if (!options.otlpEndpoint) return async () => undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const exporter = new OTLPTraceExporter({ url: options.otlpEndpoint, headers: options.headers });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName, "service.instance.id": replicaId }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  // Registers the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  noteTracingSdkRegistered();
  logger.info({ otlpEndpoint: displayUrl(options.otlpEndpoint) }, "tracing: exporting spans over OTLP/HTTP");
  return () => provider.shutdown();
}
