import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import type { Config } from "../config/schema.js";
import type { Logger } from "../observability/logger.js";
import type { TaskEngine } from "../tasks/engine.js";
import { buildAdminApp } from "./routes.js";

export interface AdminListener {
  url: string;
  close(): Promise<void>;
}

/**
 * The admin listener: its own port (default host 127.0.0.1), never the clients' one. Undefined
 * when `admin.port` is not set; the schema requires a token whenever it is.
 */
export async function startAdmin(engine: TaskEngine, options: Config["admin"], logger: Logger): Promise<AdminListener | undefined> {
  if (options.port === undefined || options.token === undefined) return undefined;
  const app = buildAdminApp(engine, options.token, logger, options.recentWindowMs);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () => resolve(s));
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  logger.info({ url }, "admin listener: task list, cancel and status page");
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      }),
  };
}
