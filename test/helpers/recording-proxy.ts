import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "./otlp-receiver.js";

export interface Recorded {
  /** The JSON-RPC method of a POST (none for an answer to the upstream's request, nor for GET/DELETE). */
  method?: string;
  traceparent?: string;
  /** The HTTP method, and the Authorization header as the upstream received it ("" when none). */
  httpMethod?: string;
  authorization?: string;
  /** A POST's MCP-Protocol-Version header and its body's `params._meta`, as the upstream received them. */
  protocolVersion?: string;
  meta?: Record<string, unknown>;
}

/** A loopback forwarder in front of an HTTP upstream that records each request's JSON-RPC method, traceparent and Authorization. */
export async function startRecordingProxy(target: string): Promise<{ mcpUrl: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const to = new URL(target);
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const httpMethod = req.method;
    const authorization = req.headers.authorization ?? "";
    if (req.method === "POST") {
      const { method, params } = JSON.parse(body) as { method?: string; params?: { _meta?: Record<string, unknown> } };
      const protocolVersion = req.headers["mcp-protocol-version"] as string | undefined;
      seen.push({ method, traceparent: req.headers.traceparent as string | undefined, httpMethod, authorization, protocolVersion, meta: params?._meta });
    } else seen.push({ httpMethod, authorization });
    const upstream = request({ hostname: to.hostname, port: to.port, path: to.pathname, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    upstream.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    mcpUrl: `http://127.0.0.1:${port}${to.pathname}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
