import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HopLimits {
  /** A POST not fully answered within this is cut (a maximum request duration, like API Gateway's). Omitted: none. */
  maxRequestMs?: number;
  /** Any response (POST or GET stream) that sends no byte for this long is cut (an idle timeout, like a load balancer's). */
  idleMs: number;
}

export interface TimeoutProxy {
  url: string;
  /** Responses this hop cut, by reason. */
  cuts: { duration: number; idle: number };
  /** Why the hop cut the request that carried `x-hop-request: <id>`; undefined if it did not. */
  cutOf(id: string): "duration" | "idle" | undefined;
  close(): Promise<void>;
}

/**
 * A loopback HTTP hop in front of `targetOrigin` that cuts what a timeout-limited proxy cuts: a
 * request past its maximum duration (504 when nothing was answered yet, else the connection is
 * dropped) and a response idle for too long. Bodies and headers pass unchanged.
 */
export async function startTimeoutProxy(targetOrigin: string, limits: HopLimits): Promise<TimeoutProxy> {
  const to = new URL(targetOrigin);
  const cuts = { duration: 0, idle: 0 };
  const byRequest = new Map<string, "duration" | "idle">();
  const server = createServer((req, res) => forward(req, res, to, limits, cuts, byRequest));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cuts,
    cutOf: (id) => byRequest.get(id),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function forward(
  req: IncomingMessage,
  res: ServerResponse,
  to: URL,
  limits: HopLimits,
  cuts: TimeoutProxy["cuts"],
  byRequest: Map<string, "duration" | "idle">,
): void {
  const id = req.headers["x-hop-request"];
  const upstream = request({ hostname: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, host: to.host } });
  const cut = (reason: "duration" | "idle") => {
    cuts[reason]++;
    if (typeof id === "string") byRequest.set(id, reason);
    if (!res.headersSent) res.writeHead(504, { "content-type": "text/plain" }).end(`hop ${reason} limit`);
    else res.destroy();
    upstream.destroy();
  };
  let idle = setTimeout(() => cut("idle"), limits.idleMs);
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => cut("idle"), limits.idleMs);
  };
  const duration = req.method === "POST" && limits.maxRequestMs !== undefined ? setTimeout(() => cut("duration"), limits.maxRequestMs) : undefined;
  const done = () => {
    clearTimeout(idle);
    clearTimeout(duration);
  };
  upstream.on("response", (up) => {
    touch();
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.on("data", (chunk: Buffer) => {
      touch();
      res.write(chunk);
    });
    up.on("end", () => {
      done();
      res.end();
    });
  });
  upstream.on("error", () => {
    done();
    res.destroy();
  });
  res.on("close", () => {
    done();
    upstream.destroy();
  });
  req.pipe(upstream);
}
