import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { modern } from "../helpers/modern.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";

/** A loopback proxy in front of the demo server that remembers the Authorization of every request. */
function recordingProxy(target: string): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const to = new URL(target);
  const server = createServer((req, res) => {
    seen.push(String(req.headers.authorization ?? ""));
    const upstream = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` })));
}

describe("upstream credentials", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let gw: GatewayProcess;
  beforeAll(async () => {
    demo = await startDemoHttp();
    proxy = await recordingProxy(demo.mcpUrl);
    gw = await startGateway(
      { auth: bearerAuth("alice"), upstreams: [{ name: "api", path: "/mcp", http: { url: proxy.url, headers: { authorization: "Bearer ${UPSTREAM_TOKEN}" } } }] },
      { UPSTREAM_TOKEN: "upstream-secret-4711" },
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await new Promise((r) => proxy?.server.close(r));
    proxy?.server.closeAllConnections();
    await demo?.stop();
  });

  it("sends the configured header, read from the environment, and never the client's Authorization; logs neither", async () => {
    const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers: as("alice") });
    expect(res.body.result).toMatchObject({ resultType: "complete" });
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(new Set(proxy.seen)).toEqual(new Set(["Bearer upstream-secret-4711"]));
    expect(gw.output()).not.toContain("upstream-secret-4711");
    expect(gw.output()).not.toContain("tok-alice");
  });
});
