import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type EventStore, StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { createDemoServer } from "./create-server.js";
import { BoundedEventStore } from "./event-store.js";
import { DEMO_HTTP_PATH } from "./http-path.js";

/** Makes the MCP server object of one connection (the SDK binds one to one transport). */
export type ServerFactory = () => { connect(transport: Transport): Promise<void>; close(): Promise<void> };

export interface DemoHttpServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

/**
 * Streamable HTTP in stateful mode: one transport (and one MCP server object) per session,
 * created by an initialize request without a session id and found by Mcp-Session-Id afterwards.
 * `eventStore`: SSE events carry ids and a lost stream can be resumed (event-store.ts).
 */
export async function listenDemoHttp(
  port: number,
  host: string,
  log: (line: string) => void,
  factory: ServerFactory = () => createDemoServer(log),
  options: { eventStore?: boolean } = {},
): Promise<DemoHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  // One store for every session: an event id names its stream, and a resumption names its session.
  const eventStore = options.eventStore === true ? new BoundedEventStore() : undefined;
  const http = createServer((req, res) => {
    route(req, res, sessions, factory, eventStore).catch((err: unknown) => {
      log(`request failed: ${String(err)}`);
      if (!res.headersSent) sendError(res, 500, -32603, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  return { port: address.port, host, close: () => closeAll(http, sessions) };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: Map<string, StreamableHTTPServerTransport>,
  factory: ServerFactory,
  eventStore: EventStore | undefined,
): Promise<void> {
  if (new URL(req.url ?? "/", "http://localhost").pathname !== DEMO_HTTP_PATH) return sendError(res, 404, -32601, "Not found");
  if (!["POST", "GET", "DELETE"].includes(req.method ?? "")) return sendError(res, 405, -32601, "Method not allowed");
  const sessionId = req.headers["mcp-session-id"];
  if (typeof sessionId === "string") {
    const transport = sessions.get(sessionId);
    if (!transport) return sendError(res, 404, -32001, "Session not found");
    return transport.handleRequest(req, res);
  }
  if (req.method !== "POST") return sendError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
  const body = await readJson(req);
  if (body === undefined) return sendError(res, 400, -32700, "Parse error");
  if (!isInitializeRequest(body)) return sendError(res, 400, -32000, "Bad Request: no valid session ID provided");
  const transport = await openSession(sessions, factory, eventStore);
  await transport.handleRequest(req, res, body);
}

async function openSession(
  sessions: Map<string, StreamableHTTPServerTransport>,
  factory: ServerFactory,
  eventStore: EventStore | undefined,
): Promise<StreamableHTTPServerTransport> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, transport),
    ...(eventStore ? { eventStore } : {}),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await factory().connect(transport);
  return transport;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function closeAll(http: HttpServer, sessions: Map<string, StreamableHTTPServerTransport>): Promise<void> {
  // Closing a transport aborts its running handlers, so sleeping calls stop with it.
  await Promise.all([...sessions.values()].map((t) => t.close()));
  sessions.clear();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
