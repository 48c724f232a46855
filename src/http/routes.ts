import { Hono } from "hono";
import { decodeMessage } from "../jsonrpc/decode.js";
import type { JsonRpcId } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import type { Front } from "../dialects/front.js";
import { bodySizeLimit } from "./body-size.js";
import { GatewayError } from "./errors.js";
import { jsonContentType, originGuard } from "./guards.js";
import { parseAccept } from "./reply.js";

export interface HttpOptions {
  maxBodyBytes: number;
  allowedOrigins: readonly string[];
}

export interface Endpoint {
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
export function buildHttpApp(endpoints: readonly Endpoint[], health: Health, options: HttpOptions, logger: Logger): Hono {
  const app = new Hono();
  app.get("/livez", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const problems = await health.problems();
    return c.json(problems.length ? { status: "not ready", problems } : { status: "ready" }, problems.length ? 503 : 200);
  });
  for (const { path, front } of endpoints) mount(app, path, front, options, logger);
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
  app.post(path, jsonContentType, bodySizeLimit(options.maxBodyBytes, tooLarge), async (c) => {
    const accepts = parseAccept(c.req.header("accept"));
    if (!accepts.json && !accepts.sse)
      return new GatewayError("not_acceptable", "Accept must include application/json or text/event-stream").toResponse();
    const decoded = decodeMessage(await c.req.text());
    if (!decoded.ok) return new GatewayError(decoded.kind, decoded.detail).toResponse(decoded.id);
    const id: JsonRpcId | null = "id" in decoded.message ? decoded.message.id : null;
    try {
      return await front.post({
        message: decoded.message,
        accepts,
        sessionId: c.req.header("mcp-session-id"),
        protocolVersion: c.req.header("mcp-protocol-version"),
        mcpMethod: c.req.header("mcp-method"),
        mcpName: c.req.header("mcp-name"),
        // A getter: the signal exists only for the few calls that wait on it (tasks/result), since
        // creating it makes @hono/node-server build an AbortController for the request.
        get signal() {
          return c.req.raw.signal;
        },
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
