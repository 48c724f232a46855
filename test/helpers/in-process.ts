import { pino } from "pino";
import { startGateway, type Gateway, type GatewayParts } from "../../src/app.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { InProcessConnector } from "./in-process-upstream.js";
import { modernRequest, readModern, type ModernOptions } from "./modern.js";
import { openSession, postRequest } from "./raw.js";

/** Requests go to `app.request` under this URL: a loopback Host, so the Host guard lets them in. */
export const BASE = "http://127.0.0.1";

export interface InProcessGateway {
  gateway: Gateway;
  /** The demo server behind each upstream path, by upstream name. */
  upstreams: Map<string, InProcessConnector>;
  request(path: string, init?: RequestInit): Promise<Response>;
  send(request: Request): Promise<Response>;
  /** A raw JSON-RPC POST to `path` (default /mcp). */
  post(body: unknown, headers?: Record<string, string>, path?: string): Promise<Response>;
  /** A 2026-07-28 request, read back as { status, headers, body }. */
  modern(method: string, params?: Record<string, unknown>, options?: ModernOptions, path?: string): ReturnType<typeof readModern>;
  /** A legacy session opened by hand (2025-11-25 unless said). */
  openSession(capabilities?: Record<string, unknown>, protocolVersion?: string, path?: string): Promise<string>;
  close(): Promise<void>;
}

/** An upstream entry served in process by the demo server; `http` so its questions are tied to their call. */
export function demoUpstream(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "demo", path: "/mcp", http: { url: "http://127.0.0.1:9/mcp" }, ...overrides };
}

/**
 * The whole gateway built in this process from a config (the memory store unless it names a
 * Redis), its upstreams the demo server in process. Nothing is spawned; requests go through
 * hono's `app.request`, so a test costs milliseconds.
 */
export async function inProcessGateway(config: Record<string, unknown> = {}, parts: Pick<GatewayParts, "store"> = {}): Promise<InProcessGateway> {
  const parsed = ConfigSchema.parse({
    upstreams: [demoUpstream()],
    ...config,
    listen: { host: "127.0.0.1", port: 0 },
    log: { level: "silent" },
    tasks: { drainMs: 0, ...(config.tasks as Record<string, unknown> | undefined) },
  });
  const upstreams = new Map<string, InProcessConnector>();
  const gateway = await startGateway(parsed, pino({ level: "silent" }), {
    ...parts,
    connector: (u, logger) => {
      const connector = new InProcessConnector(u.name, logger);
      upstreams.set(u.name, connector);
      return connector;
    },
  });
  // A network request carries its Host header; one built in process must be given it.
  const send = async (request: Request) => {
    if (!request.headers.has("host")) request.headers.set("host", new URL(request.url).host);
    return gateway.app.request(request);
  };
  return {
    gateway,
    upstreams,
    send,
    request: (path, init) => send(new Request(`${BASE}${path}`, init)),
    post: (body, headers, path = "/mcp") => send(postRequest(`${BASE}${path}`, body, headers)),
    modern: async (method, params, options, path = "/mcp") => readModern(await send(modernRequest(`${BASE}${path}`, method, params, options))),
    openSession: (capabilities, protocolVersion = "2025-11-25", path = "/mcp") => openSession(`${BASE}${path}`, capabilities, protocolVersion, send),
    close: () => gateway.close(),
  };
}
