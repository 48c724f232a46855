import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import type { Config } from "./config/schema.js";
import { Front } from "./dialects/front.js";
import { LegacyFront } from "./dialects/legacy/legacy-front.js";
import { ModernFront } from "./dialects/modern/modern-front.js";
import { TasksA } from "./dialects/tasks-a/handlers.js";
import { tasksBHandlers } from "./dialects/tasks-b/handlers.js";
import { SessionCache } from "./dialects/legacy/session-cache.js";
import { Sessions } from "./dialects/legacy/sessions.js";
import { Relay } from "./dialects/passthrough/relay.js";
import { buildHttpApp, type Endpoint } from "./http/routes.js";
import type { Logger } from "./observability/logger.js";
import type { Store } from "./store/contract.js";
import { createStore } from "./store/index.js";
import { TaskEngine } from "./tasks/engine.js";
import type { UpstreamConnector } from "./upstream/connector.js";
import { createConnector } from "./upstream/index.js";

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly replicaId: string;
  close(): Promise<void>;
}

/** The composition root: builds every part from the config and wires them. No logic of its own. */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  const replicaId = randomBytes(4).toString("hex");
  const store = createStore({ redisUrl: config.store.redisUrl, keyPrefix: config.store.keyPrefix, logger });
  if (store.kind === "memory")
    logger.warn("NO REDIS CONFIGURED: sessions and tasks live in this process only and are lost when it stops; set store.redisUrl for anything but development");
  const { tasks } = config;
  const engineOptions = {
    replicaId,
    leaseMs: tasks.leaseMs,
    cancelGraceMs: tasks.cancelGraceMs,
    statusWriteIntervalMs: tasks.statusWriteIntervalMs,
    ...(tasks.inputTimeoutMs !== undefined ? { inputTimeoutMs: tasks.inputTimeoutMs } : {}),
  };
  const engine = new TaskEngine({ store, logger, options: engineOptions, clock: Date.now });
  await engine.start();
  const connectors = config.upstreams.map((u) => createConnector(u, logger.child({ upstream: u.name })));
  const keepAliveMs = config.http.sseKeepAliveMs;
  const endpoints: Endpoint[] = config.upstreams.map((u, i) => {
    const relay = new Relay(connectors[i]!, logger.child({ upstream: u.name }), replicaId);
    const tasksA = new TasksA({ engine, relay, upstream: u, tasks, keepAliveMs });
    // A cached session must be re-read (pushing its idle expiry out) well before it could expire.
    const sessionCache = new SessionCache(store.bus, Math.min(config.sessions.cacheMs, config.sessions.idleTtlMs / 2));
    const legacy = new LegacyFront(new Sessions(store, u.name, config.sessions.idleTtlMs, sessionCache), relay, keepAliveMs, tasksA);
    const modern = new ModernFront(relay, tasksBHandlers({ engine, relay, upstream: u, tasks }), keepAliveMs);
    return { path: u.path, front: new Front(legacy, modern) };
  });
  const app = buildHttpApp(endpoints, { problems: () => problems(store, connectors) }, config.http, logger);
  const server = await listen(app.fetch, config.listen.host, config.listen.port);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${hostForUrl(config.listen.host)}:${port}`;
  logger.info({ url, replicaId, store: store.kind, upstreams: config.upstreams.map((u) => `${u.name} at ${u.path}`) }, "taskgate listening");
  await startConnectors(connectors, logger);
  return { url, port, replicaId, close: () => shutdown(server, engine, connectors, store) };
}

async function startConnectors(connectors: UpstreamConnector[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(connectors.map((c) => c.start()));
  results.forEach((r, i) => {
    if (r.status === "rejected")
      logger.error({ upstream: connectors[i]!.name, reason: String(r.reason?.message ?? r.reason) }, "upstream is not available; retrying in the background, /readyz stays 503 until it is");
  });
}

async function problems(store: Store, connectors: UpstreamConnector[]): Promise<string[]> {
  const found: string[] = [];
  await store.ping(500).catch((err: unknown) => found.push(`store (${store.kind}): ${(err as Error).message}`));
  for (const c of connectors) if (!c.isReady()) found.push(`upstream '${c.name}': ${c.lastError() ?? "not initialized"}`);
  return found;
}

function listen(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    server.once("error", reject);
  });
}

async function shutdown(server: ServerType, engine: TaskEngine, connectors: UpstreamConnector[], store: Store): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ("closeAllConnections" in server) server.closeAllConnections();
  });
  await engine.stop();
  await Promise.allSettled(connectors.map((c) => c.close()));
  await store.close();
}

function hostForUrl(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
