import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createServer, type ServerOptions } from "node:http";
import { serve, type ServerType } from "@hono/node-server";
import type { Hono } from "hono";
import type { Config, UpstreamConfig } from "./config/schema.js";
import { startAdmin } from "./admin/server.js";
import { directPath, type Listener } from "./http/direct-path.js";
import { RequestIdResponse } from "./http/request-id-response.js";
import { Front } from "./dialects/front.js";
import { LegacyFront } from "./dialects/legacy/legacy-front.js";
import { ModernFront } from "./dialects/modern/modern-front.js";
import { ToolHeaders } from "./dialects/modern/tool-headers.js";
import { Tasks2025Handlers } from "./dialects/tasks-2025-11-25/handlers.js";
import { tasksExtensionHandlers } from "./dialects/tasks-extension/handlers.js";
import { Unaware } from "./dialects/unaware/unaware.js";
import { withGatewayToolScopes } from "./dialects/unaware/scopes.js";
import { SessionCache } from "./sessions/session-cache.js";
import { Sessions } from "./sessions/sessions.js";
import { upstreamCalls, type UpstreamCalls } from "./upstream/mux/isolation.js";
import { nativeTasks } from "./dialects/passthrough/native.js";
import { createAuthenticator } from "./auth/index.js";
import type { CallerEnv } from "./http/auth-guard.js";
import { CallerLimits } from "./http/caller-limits.js";
import { buildHttpApp, type Endpoint, type Security } from "./http/routes.js";
import { protectedResources, scopePolicy } from "./http/oauth-wiring.js";
import { Audit } from "./observability/audit.js";
import type { Logger } from "./observability/logger.js";
import { Metrics } from "./observability/metrics.js";
import { startTracing } from "./observability/tracing-sdk.js";
import type { Store } from "./store/contract.js";
import { createStore } from "./store/index.js";
import { observeStore } from "./store/observed-store.js";
import { claimOf } from "./store/format.js";
import { checkStoreFormat, FormatWatch } from "./store/format-check.js";
import { packageVersion } from "./util/version.js";
import { TaskEngine } from "./tasks/engine.js";
import { RequestStateCodec } from "./tasks/request-state.js";
import type { UpstreamConnector } from "./upstream/connector.js";
import { createConnector } from "./upstream/index.js";
import { SessionEnds } from "./sessions/session-ends.js";

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly replicaId: string;
  readonly adminUrl?: string;
  /** The HTTP app the listener serves: in-process tests call `app.request(...)` on it. */
  readonly app: Hono<CallerEnv>;
  close(): Promise<void>;
}

/** Parts a caller may hand in instead of the ones built from the config (tests: an in-process upstream). */
export interface GatewayParts {
  connector?: (upstream: UpstreamConfig, logger: Logger) => UpstreamConnector;
  store?: Store;
}

/** The composition root: builds every part from the config and wires them. No logic of its own. */
export async function startGateway(config: Config, logger: Logger, parts: GatewayParts = {}): Promise<Gateway> {
  const replicaId = randomBytes(4).toString("hex");
  const stopTracing = await startTracing(config.tracing, replicaId, logger);
  const metrics = new Metrics();
  const store = observeStore(parts.store ?? createStore({ ...config.store, logger }), metrics);
  if (store.kind === "redis") for (const warning of await store.configurationWarnings()) logger.warn(warning);
  const formatWatch = await checkFormat(store, logger, stopTracing);
  if (store.kind === "memory")
    logger.warn(
      "NO REDIS CONFIGURED: sessions and tasks live in this process only and are lost when it stops; set store.redisUrl for anything but development",
    );
  const { tasks } = config;
  const engineOptions = {
    replicaId,
    leaseMs: tasks.leaseMs,
    cancelGraceMs: tasks.cancelGraceMs,
    statusWriteIntervalMs: tasks.statusWriteIntervalMs,
    mrtrTimeoutMs: tasks.mrtrTimeoutMs,
    reaperIntervalMs: tasks.reaperIntervalMs,
    maxAttempts: tasks.maxAttempts,
    ...(tasks.inputTimeoutMs !== undefined ? { inputTimeoutMs: tasks.inputTimeoutMs } : {}),
    maxActiveTasksPerPrincipal: config.limits.maxActiveTasksPerPrincipal,
    maxResultBytes: config.limits.maxResultBytes,
  };
  const audit = new Audit(logger);
  const engine = new TaskEngine({
    store,
    logger,
    metrics,
    audit,
    options: engineOptions,
    clock: Date.now,
    ...(formatWatch ? { formatRefusal: () => formatWatch.refusal } : {}),
  });
  // Twice the lease (30 s by default): 17 commands each time at rest (the record, and the 16 shards of format 1's index).
  formatWatch?.start(2 * tasks.leaseMs);
  metrics.setInFlight(() => engine.ownedCount);
  const requestState = requestStateCodec(tasks.requestStateSecret, store, logger);
  await engine.start();
  const connectorOf = parts.connector ?? createConnector;
  const connectors = config.upstreams.map((u) => connectorOf(u, logger.child({ upstream: u.name })));
  const keepAliveMs = config.http.sseKeepAliveMs;
  const calls = config.upstreams.map((u, i) => upstreamCalls(u, connectors[i]!, logger.child({ upstream: u.name }), `${replicaId}-${u.name}`, metrics));
  for (const [i, u] of config.upstreams.entries()) logger.info({ upstream: u.name, ...calls[i]!.describe }, "upstream isolation");
  const sessionEnds: SessionEnds[] = [];
  const endpoints: Endpoint[] = config.upstreams.map((u, i) => {
    const { relay, pool: caller } = calls[i]!;
    const { maxInputResponsesBytes } = config.limits;
    const { native, hints } = nativeTasks(u, relay, Date.now);
    engine.addUpstream(u.name, {
      caller: caller ?? relay,
      hints,
      native,
      retryOnOwnerLoss: (tool) => (Object.hasOwn(u.tools, tool) ? u.tools[tool]?.retryOnOwnerLoss : undefined),
    });
    const tasks2025 = new Tasks2025Handlers({ engine, relay, native, upstream: u, tasks, keepAliveMs, maxInputResponsesBytes, ...(caller ? { caller } : {}) });
    const unaware = new Unaware({ engine, relay, native, upstream: u, tasks, maxInputResponsesBytes, ...(caller ? { caller } : {}) });
    // A cached session must be re-read (pushing its idle expiry out) well before it could expire.
    const sessionCache = new SessionCache(store.bus, Math.min(config.sessions.cacheMs, config.sessions.idleTtlMs / 2));
    const legacy = new LegacyFront(new Sessions(store, u.name, config.sessions.idleTtlMs, sessionCache), relay, keepAliveMs, tasks2025, unaware, native);
    sessionEnds.push(new SessionEnds(store.bus, store, config.sessions.idleTtlMs, legacy.holder, logger.child({ upstream: u.name })));
    const handlers = tasksExtensionHandlers({
      engine,
      relay,
      native,
      upstream: u,
      tasks,
      requestState,
      maxInputResponsesBytes,
      unaware,
      ...(caller ? { caller } : {}),
    });
    const modern = new ModernFront(relay, handlers, keepAliveMs, new ToolHeaders(relay, logger.child({ upstream: u.name })));
    const forwardAuthorizationTo = u.http?.forwardAuthorization ? u.http.url : undefined;
    return {
      name: u.name,
      path: u.path,
      front: new Front(legacy, modern),
      ...(forwardAuthorizationTo ? { forwardAuthorizationTo } : {}),
      scopes: unaware.active ? withGatewayToolScopes(scopePolicy(u), tasks.gatewayTools) : scopePolicy(u),
    };
  });
  // The resource URLs name the listener's own address unless auth.oauth.publicUrl is set; its port is known once bound.
  let selfUrl = "";
  const security = await securityOf(config, audit, logger, () => selfUrl);
  const httpOptions = { ...config.http, metricsEnabled: config.metrics.enabled };
  const health = {
    // Draining answers 503 at once, before any other check, so load balancers stop sending work.
    problems: async () => {
      if (engine.isDraining) return ["shutting down"];
      return [...(formatWatch?.refusal ? [`store format: ${formatWatch.refusal}`] : []), ...(await problems(store, connectors, calls))];
    },
    upstreams: () => Object.fromEntries(connectors.map((c) => [c.name, spoken(c)])),
    draining: () => engine.isDraining,
  };
  const app = buildHttpApp(endpoints, health, httpOptions, logger, metrics, security);
  const server = await listen(app.fetch, directPath(endpoints, httpOptions, logger, metrics, security, health), config.listen.host, config.listen.port);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${hostForUrl(config.listen.host)}:${port}`;
  selfUrl = url;
  logger.info({ url, replicaId, store: store.kind, upstreams: config.upstreams.map((u) => `${u.name} at ${u.path}`) }, "taskgate listening");
  const admin = await startAdmin(engine, config.admin, logger);
  await Promise.all(sessionEnds.map((e) => e.start()));
  // The pools warm beside their home processes: /readyz waits for both.
  for (const c of calls) c.start();
  await startConnectors(connectors, logger);
  const closeables = [...connectors, ...calls.flatMap((c) => (c.pool ? [c.pool] : []))];
  const close = async () => {
    const handedOver = await engine.drain(config.tasks.drainMs);
    await admin?.close();
    await Promise.all(sessionEnds.map((e) => e.stop()));
    formatWatch?.stop();
    await shutdown(server, engine, closeables, store, handedOver).finally(stopTracing);
  };
  return { url, port, replicaId, ...(admin ? { adminUrl: admin.url } : {}), app, close };
}

/**
 * The store's format recorded, or the start refused naming both formats (store/format.ts); then
 * watched, so a replica the format moved past stops taking calls.
 */
async function checkFormat(store: Store, logger: Logger, stopTracing: () => Promise<void>): Promise<FormatWatch | undefined> {
  if (!store.format) return undefined;
  const claim = claimOf(packageVersion());
  try {
    const stored = await checkStoreFormat(store.format, claim);
    logger.info({ storeFormat: stored.format, oldestFormat: stored.oldest, replicaFormat: claim.format }, "store format checked");
  } catch (err) {
    await store.close();
    await stopTracing();
    throw err;
  }
  return new FormatWatch(store.format, claim, logger);
}

/** MRTR's requestState is signed with a key every replica must share (docs/concepts/tasks.md, MRTR). */
function requestStateCodec(secret: string | undefined, store: Store, logger: Logger): RequestStateCodec {
  if (secret !== undefined) return new RequestStateCodec(secret);
  if (store.kind === "redis")
    logger.warn(
      "tasks.requestStateSecret is not set: MRTR requestState is signed with a key of this process only, so a retry that reaches another replica is refused; set the same secret on every replica",
    );
  return new RequestStateCodec(randomBytes(32).toString("base64url"));
}

async function securityOf(config: Config, audit: Audit, logger: Logger, selfUrl: () => string): Promise<Security> {
  const auth = await createAuthenticator(config.auth);
  if (config.auth.mode === "jwt" && config.auth.jwt.audience === "any")
    logger.warn("auth.jwt.audience: any: tokens minted for any service are accepted; name the audience taskgate's tokens carry");
  const resources = protectedResources(config, selfUrl, logger);
  if (auth.mode === "none")
    logger.warn(
      "NO AUTHENTICATION (auth.mode: none): legacy sessions are the only binding and on the 2026-07-28 wire anyone holding a task id may read it; set auth.mode for anything but development",
    );
  const limits = new CallerLimits(config.limits, audit);
  return { auth, realm: config.auth.realm, audit, limits, listenHost: config.listen.host, ...(resources ? { resources } : {}) };
}

async function startConnectors(connectors: UpstreamConnector[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(connectors.map((c) => c.start()));
  results.forEach((r, i) => {
    if (r.status === "rejected")
      logger.error(
        { upstream: connectors[i]!.name, reason: String(r.reason?.message ?? r.reason) },
        "upstream is not available; retrying in the background, /readyz stays 503 until it is",
      );
  });
}

/** What /readyz says an upstream speaks: its generation and protocol version, once negotiated. */
function spoken(connector: UpstreamConnector): { generation?: string; protocolVersion?: string } {
  const generation = connector.generation();
  const protocolVersion = connector.initializeResult()?.protocolVersion;
  return generation === undefined ? {} : { generation, ...(protocolVersion ? { protocolVersion } : {}) };
}

async function problems(store: Store, connectors: UpstreamConnector[], calls: UpstreamCalls[]): Promise<string[]> {
  const found: string[] = [];
  await store.ping(500).catch((err: unknown) => found.push(`store (${store.kind}): ${(err as Error).message}`));
  for (const c of connectors) if (!c.isReady()) found.push(`upstream '${c.name}': ${c.lastError() ?? "not initialized"}`);
  for (const c of calls) if (!c.warmed()) found.push(`upstream '${c.relay.connector.name}': its first pooled process is still starting`);
  return found;
}

/** The hono app behind the direct path, which takes most POSTs before it (http/direct-path.ts). */
function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  direct: (general: Listener) => Listener,
  hostname: string,
  port: number,
): Promise<ServerType> {
  const withDirect = ((options: ServerOptions, listener: Listener) =>
    createServer({ ...options, ServerResponse: RequestIdResponse }, direct(listener))) as unknown as typeof createServer;
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port, createServer: withDirect }, () => resolve(server));
    server.once("error", reject);
  });
}

/** `keep`: upstreams whose sessions hold tasks another replica follows now: not ended. */
async function shutdown(
  server: ServerType,
  engine: TaskEngine,
  connectors: Array<{ name?: string; close(options?: { keepSession?: boolean }): Promise<void> }>,
  store: Store,
  keep: Set<string>,
): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ("closeAllConnections" in server) server.closeAllConnections();
  });
  await engine.stop();
  await Promise.allSettled(connectors.map((c) => c.close({ keepSession: c.name !== undefined && keep.has(c.name) })));
  await store.close();
}

function hostForUrl(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
