import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { decodeMessage } from "../jsonrpc/decode.js";
import type { JsonRpcId } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { Front } from "../dialects/front.js";
import { GatewayError } from "./errors.js";
import { jsonContentType, originGuard } from "./guards.js";
import { noteMethod, observeRequests } from "./observe.js";
import { parseAccept } from "./reply.js";

export interface HttpOptions {
  maxBodyBytes: number;
  allowedOrigins: readonly string[];
  metricsEnabled: boolean;
}

export interface Endpoint {
  /** The upstream's name, for metrics and logs. */
  name: string;
  path: string;
  front: Front;
}

export interface Health {
  /** Empty when ready; otherwise why not, one line each. */
  problems(): Promise<string[]>;
}

/**
 * The HTTP surface: health probes, and per upstream path the Streamable HTTP endpoint
 * (POST a message, GET the session stream, DELETE the session). Request handling is a short list of
 * steps — origin, accept, content type, size, decode — each answering with the errors table.
 */
export function buildHttpApp(endpoints: readonly Endpoint[], health: Health, options: HttpOptions, logger: Logger, metrics: Metrics): Hono {
  const app = new Hono();
  // Prometheus scrapes the main listener, like /livez; `metrics.enabled: false` turns it off.
  if (options.metricsEnabled) app.get("/metrics", async () => new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } }));
  app.get("/livez", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const problems = await health.problems();
    return c.json(problems.length ? { status: "not ready", problems } : { status: "ready" }, problems.length ? 503 : 200);
  });
  for (const { name, path, front } of endpoints) {
    app.use(path, observeRequests(name, metrics, logger));
    mount(app, path, front, options, logger);
  }
  app.onError((err, c) => {
    if (err instanceof GatewayError) return err.toResponse();
    logger.error({ err, path: c.req.path }, "unexpected error while handling a request");
    return new GatewayError("internal").toResponse();
  });
  return app;
}

function mount(app: Hono, path: string, front: Front, options: HttpOptions, logger: Logger): void {
  const tooLarge = () => new GatewayError("payload_too_large", `the limit is ${options.maxBodyBytes} bytes`).toResponse();
  app.use(path, originGuard(options.allowedOrigins));
  app.post(path, jsonContentType, bodyLimit({ maxSize: options.maxBodyBytes, onError: tooLarge }), async (c) => {
    const accepts = parseAccept(c.req.header("accept"));
    if (!accepts.json && !accepts.sse)
      return new GatewayError("not_acceptable", "Accept must include application/json or text/event-stream").toResponse();
    const decoded = decodeMessage(await c.req.text());
    if (!decoded.ok) return new GatewayError(decoded.kind, decoded.detail).toResponse(decoded.id);
    const id: JsonRpcId | null = "id" in decoded.message ? decoded.message.id : null;
    noteMethod("method" in decoded.message ? decoded.message.method : undefined);
    try {
      return await front.post({
        message: decoded.message,
        accepts,
        sessionId: c.req.header("mcp-session-id"),
        protocolVersion: c.req.header("mcp-protocol-version"),
        mcpMethod: c.req.header("mcp-method"),
        mcpName: c.req.header("mcp-name"),
        signal: c.req.raw.signal,
      });
    } catch (err) {
      if (err instanceof GatewayError) return err.toResponse(id);
      logger.error({ err }, "unexpected error while relaying a message");
      return new GatewayError("internal").toResponse(id);
    }
  });
  app.get(path, (c) => front.get(parseAccept(c.req.header("accept")), c.req.header("mcp-session-id"), c.req.header("mcp-protocol-version")));
  app.delete(path, (c) => front.delete(c.req.header("mcp-session-id"), c.req.header("mcp-protocol-version")));
  app.all(path, () => new GatewayError("method_not_allowed").toResponse(null, { allow: "GET, POST, DELETE" }));
}
