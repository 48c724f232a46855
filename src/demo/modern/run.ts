import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { DEMO_HTTP_PATH } from "../http-path.js";
import type { DemoServerOptions, RunningDemoServer } from "../server.js";
import { TaskBook } from "./task-book.js";
import { createTaskDemoServer } from "./task-server.js";
import { createModernDemoServer } from "./tools.js";

/**
 * The 2026-07-28-only demo upstream (`demo-server --modern`): stateless Streamable HTTP at /mcp,
 * or stdio. Both refuse the legacy `initialize` with -32022 naming the versions they speak
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning, backward
 * compatibility), and log every refused request on stderr, so a client that keeps sending one
 * can be seen doing so.
 */
export async function runModernDemoServer(opts: DemoServerOptions, log: (line: string) => void): Promise<RunningDemoServer> {
  const book = new TaskBook();
  const factory = () => (opts.tasksExtension ? createTaskDemoServer(book, log) : createModernDemoServer(log));
  if (!opts.http) {
    const handle = serveStdio(factory, { legacy: "reject", onerror: (err) => log(`refused: ${err.message}`) });
    return { close: () => handle.close() };
  }
  const handler = createMcpHandler(factory, { legacy: "reject", onerror: (err) => log(`refused: ${err.message}`) });
  const fetch = (request: Request): Promise<Response> =>
    new URL(request.url).pathname === DEMO_HTTP_PATH ? handler.fetch(request) : Promise.resolve(new Response("Not found", { status: 404 }));
  const { hostname, port } = { hostname: opts.http.host ?? "127.0.0.1", port: opts.http.port };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch, hostname, port }, () => resolve(s));
    s.once("error", reject);
  });
  const close = async (): Promise<void> => {
    await handler.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ("closeAllConnections" in server) server.closeAllConnections();
    });
  };
  return { port: (server.address() as AddressInfo).port, close };
}
