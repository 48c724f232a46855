import { Hono, type Context } from "hono";
import { decodeMessage } from "../jsonrpc/decode.js";
import type { JsonRpcId, JsonRpcMessage } from "../jsonrpc/message.js";
import type { LogContext } from "../observability/log-context.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { wireOf, type Front, type FrontRequest } from "../dialects/front.js";
import type { Authenticator } from "../auth/index.js";
import type { Audit } from "../observability/audit.js";
import { authGuard, type Caller, type CallerEnv } from "./auth-guard.js";
import type { CallerLimits } from "./caller-limits.js";
import { forwardedAuthorization } from "../util/forwarded-authorization.js";
import { forwardableAuthorization } from "../auth/token-audience.js";
import { bodySizeLimit } from "./body-size.js";
import { GatewayError, isUnexpected, wireError } from "../wire/errors.js";
import { hostGuard, jsonContentType } from "./guards.js";
import { corsForAllowed, originGuard, originPolicy } from "./origins.js";
import { answerHandedOver, keepReply, noteRequest, observeRequests } from "./observe.js";
import { parseAccept, type Accepts } from "../wire/reply.js";
import type { ProtectedResources, ResourceChallenge } from "./resource-metadata.js";
import { hasScopes, insufficientScope, NO_SCOPES, scopesFor, type ScopePolicy } from "./scope-guard.js";

export interface HttpOptions {
  maxBodyBytes: number;
  /** Deeper JSON is refused before any other work. */
  maxJsonDepth: number;
  /** What one SSE reply may hold unsent before it is closed. */
  sseMaxBufferedBytes: number;
  allowedOrigins: readonly string[];
  metricsEnabled: boolean;
  allowedHosts: readonly string[];
}

/** Who may call and how much: one authenticator and one set of limits for every path. */
export interface Security {
  auth: Authenticator;
  realm: string;
  audit: Audit;
  limits: CallerLimits;
  listenHost: string;
  /** auth mode oauth: each endpoint's protected resource metadata (RFC 9728). */
  resources?: ProtectedResources;
}

/** Methods whose answer is a stream that stays open: refused up front when the caller holds too many. */
const LONG_STREAMS = new Set(["tasks/result", "subscriptions/listen"]);

export interface Endpoint {
  /** The upstream's name, for metrics and logs. */
  name: string;
  path: string;
  front: Front;
  /**
   * `http.forwardAuthorization`: the upstream's URL. A client's own Authorization header goes inward
   * with its request when the token's `aud` names it (auth/token-audience.ts).
   */
  forwardAuthorizationTo?: string;
  /** Scopes a token needs for this endpoint, its methods and its tools (auth modes oauth, jwt). */
  scopes?: ScopePolicy;
}

export interface Health {
  /** Empty when ready; otherwise why not, one line each. */
  problems(): Promise<string[]>;
  /** Per upstream, the protocol it speaks once ready (the generation detected at start). */
  upstreams?(): Record<string, { generation?: string; protocolVersion?: string }>;
  /** True once SIGTERM/SIGINT arrived: no new sessions (nor tasks, refused by the engine). */
  draining(): boolean;
}

/**
 * The HTTP surface: health probes, and per upstream path the Streamable HTTP endpoint
 * (POST a message, GET the session stream, DELETE the session). Request handling is a short list of
 * steps — origin, accept, content type, size, decode — each answering with the errors table.
 */
export function buildHttpApp(
  endpoints: readonly Endpoint[],
  health: Health,
  options: HttpOptions,
  logger: Logger,
  metrics: Metrics,
  security: Security,
): Hono<CallerEnv> {
  const app = new Hono<CallerEnv>();
  // Prometheus scrapes the main listener, like /livez; `metrics.enabled: false` turns it off.
  if (options.metricsEnabled) app.get("/metrics", async () => new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } }));
  app.get("/livez", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const problems = await health.problems();
    const upstreams = health.upstreams?.() ?? {};
    return c.json(problems.length ? { status: "not ready", problems, upstreams } : { status: "ready", upstreams }, problems.length ? 503 : 200);
  });
  security.resources?.mount(
    app,
    endpoints.map((e) => e.path),
  );
  const failed = (err: unknown, c: Context<CallerEnv>): Response => {
    if (err instanceof GatewayError) return err.toResponse();
    logger.error({ err, path: c.req.path, ...c.get("logContext") }, "unexpected error while handling a request");
    return new GatewayError("internal").toResponse();
  };
  for (const endpoint of endpoints) mount(app, endpoint, options, logger, metrics, security, health, failed);
  app.onError(failed);
  return app;
}

/**
 * Steps in order: observe, Host, Origin, CORS, authentication (the principal), then per method.
 * One handler per path that runs them as plain functions: hono answers a path with a single
 * handler without composing middleware, so a request pays for no `next()` chain. Every entry
 * point below receives `principal` from the one auth step; a new one binds by passing it on.
 */
function mount(
  app: Hono<CallerEnv>,
  endpoint: Endpoint,
  options: HttpOptions,
  logger: Logger,
  metrics: Metrics,
  security: Security,
  health: Health,
  failed: (err: unknown, c: Context<CallerEnv>) => Response,
): void {
  const { path, front, scopes = NO_SCOPES } = endpoint;
  const tooLarge = () => new GatewayError("payload_too_large", `the limit is ${options.maxBodyBytes} bytes`).toResponse();
  const { limits } = security;
  const resource = security.resources?.challengeFor(path);
  const observe = observeRequests(endpoint.name, metrics, logger, options.sseMaxBufferedBytes);
  const checkHost = hostGuard(options.allowedHosts, security.listenHost);
  const checkOrigin = originGuard(originPolicy(options.allowedOrigins, security.listenHost));
  // After the Origin check, before auth: a preflight carries no credentials, and a 401's
  // WWW-Authenticate must be readable by the page.
  const cors = corsForAllowed(["GET", "POST", "DELETE"]);
  const authenticate = authGuard(security.auth, security.realm, security.audit, { resource, requiredScopes: scopes.required });
  const withinSize = bodySizeLimit(options.maxBodyBytes, tooLarge);
  const post = postMessage(endpoint, options, logger, security, health, resource);
  const byMethod = (c: Context<CallerEnv>): Response | Promise<Response> => {
    switch (c.req.method) {
      case "POST":
        return jsonContentType(c) ?? withinSize(c, () => post(c));
      // hono serves HEAD with the GET route's response, without its body.
      case "GET":
      case "HEAD": {
        const [principal, session] = [c.get("principal"), c.req.header("mcp-session-id")];
        const key = limitKey(principal, session);
        limits.checkStreams(key, c.get("logContext"));
        return front.get(parseAccept(c.req.header("accept")), session, c.req.header("mcp-protocol-version"), principal).then((r) => limits.track(key, r));
      }
      case "DELETE":
        return front.delete(c.req.header("mcp-session-id"), c.req.header("mcp-protocol-version"), c.get("principal"));
      default:
        return new GatewayError("method_not_allowed").toResponse(null, { allow: "GET, POST, DELETE" });
    }
  };
  const authenticated = (c: Context<CallerEnv>): Response | Promise<Response> => {
    const authenticating = authenticate(c);
    if (authenticating instanceof Promise) return authenticating.then((refused) => refused ?? byMethod(c));
    return authenticating ?? byMethod(c);
  };
  // A step that throws is answered here, inside the observer, as hono answers a thrown error.
  // Plain functions and one catch rather than async ones: with the log context on, every await
  // costs a promise more.
  const answer = (c: Context<CallerEnv>): Promise<Response> => {
    try {
      const response = authenticated(c);
      return response instanceof Promise ? response.catch((err: unknown) => failed(err, c)) : Promise.resolve(response);
    } catch (err) {
      return Promise.resolve(failed(err, c));
    }
  };
  app.all(path, (c) => {
    // Answered on the direct path already, with a stream that is written here (direct-path.ts).
    const before = answerHandedOver(c);
    if (before) return observe(c, () => Promise.resolve(before.response), before);
    return observe(c, () => {
      try {
        const refused = checkHost(c) ?? checkOrigin(c);
        return refused ? Promise.resolve(refused) : cors(c, () => answer(c));
      } catch (err) {
        return Promise.resolve(failed(err, c));
      }
    });
  });
}

/** A POST: one JSON-RPC message, decoded, then the steps of a decoded message (`messageSteps`). */
function postMessage(
  endpoint: Endpoint,
  options: HttpOptions,
  logger: Logger,
  security: Security,
  health: Health,
  resource: ResourceChallenge | undefined,
): (c: Context<CallerEnv>) => Promise<Response> {
  const steps = messageSteps(endpoint, logger, security, health, resource);
  return async (c) => {
    const accepts = parseAccept(c.req.header("accept"));
    if (!accepts.json && !accepts.sse) return new GatewayError("not_acceptable", "Accept must include application/json or text/event-stream").toResponse();
    const decoded = decodeMessage(await c.req.text(), { maxDepth: options.maxJsonDepth });
    if (!decoded.ok) return new GatewayError(decoded.kind, decoded.detail).toResponse(decoded.id);
    const response = await steps({
      message: decoded.message,
      accepts,
      sessionId: c.req.header("mcp-session-id"),
      protocolVersion: c.req.header("mcp-protocol-version"),
      mcpMethod: c.req.header("mcp-method"),
      mcpName: c.req.header("mcp-name"),
      header: (name) => c.req.header(name),
      // Only tasks/result waits on it: creating it makes @hono/node-server build an
      // AbortController for the request. Not a getter: V8 allocates an object literal's
      // accessor pair in old space, which then keeps the whole request alive until a full GC.
      signal: () => c.req.raw.signal,
      caller: { principal: c.get("principal"), scopes: c.get("scopes"), audience: c.get("audience") },
      log: c.get("logContext"),
    });
    return keepReply(c, response);
  };
}

/** A decoded message with what the steps before it found. */
export interface PostedMessage {
  message: JsonRpcMessage;
  accepts: Accepts;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  mcpMethod: string | undefined;
  mcpName: string | undefined;
  /** Any request header by name (scopes' Mcp-Name, Authorization when forwarded, Mcp-Param-*). */
  header: (name: string) => string | undefined;
  /** The request's abort signal, asked for by tasks/result alone. */
  signal: () => AbortSignal | undefined;
  caller: Caller;
  log: LogContext;
}

/**
 * The steps of a decoded message, in order: scopes, draining, the rate limit and the stream limit,
 * then the front. Shared by the route and the direct path (direct-path.ts), which reach them by
 * different ways of reading the request. Never throws nor rejects: a step's error is answered as
 * the errors table says, anything unexpected as internal.
 */
export function messageSteps(
  endpoint: Endpoint,
  logger: Logger,
  security: Security,
  health: Health,
  resource: ResourceChallenge | undefined,
): (posted: PostedMessage) => Response | Promise<Response> {
  const { limits } = security;
  const checks = messageChecks(endpoint, security, health, resource);
  const { front, forwardAuthorizationTo } = endpoint;
  return (posted) => {
    const { message, sessionId, caller, log } = posted;
    const id: JsonRpcId | null = "id" in message ? message.id : null;
    const key = limitKey(caller.principal, sessionId);
    const method = "method" in message ? message.method : "";
    const failed = (err: unknown): Response => {
      if (!isUnexpected(err)) return wireError(err).toResponse(id);
      logger.error({ err, ...log }, "unexpected error while relaying a message");
      return new GatewayError("internal").toResponse(id);
    };
    try {
      const refused = checks(posted, key);
      if (refused) return refused;
      if (LONG_STREAMS.has(method)) limits.checkStreams(key, log);
      const request = frontRequestOf(posted);
      if (method === "tasks/result") request.signal = posted.signal();
      // Read only where the upstream forwards it, so elsewhere the secret goes no further than auth.
      // Off by default, and then only a token whose audience names the upstream: MCP authorization
      // (Token Handling) forbids passing through a token issued to taskgate itself (docs/operations/security.md, Upstream credentials).
      if (forwardAuthorizationTo !== undefined)
        Object.assign(request, forwardedAuthorization(forwardableAuthorization(posted.header("authorization"), caller.audience, forwardAuthorizationTo)));
      return front.post(request).then((response) => {
        try {
          return limits.track(key, response);
        } catch (err) {
          return failed(err);
        }
      }, failed);
    } catch (err) {
      return failed(err);
    }
  };
}

/**
 * The checks of a decoded message before the front, in order: noted for the logs and the span,
 * scopes, draining, the rate limit (`key`: limitKey). A refusal as its Response; undefined lets it
 * on. messageSteps takes them, and so do the direct path's polls (direct-path.ts), which answer
 * with a message rather than a Response.
 */
export function messageChecks(
  { scopes = NO_SCOPES }: Endpoint,
  security: Security,
  health: Health,
  resource: ResourceChallenge | undefined,
): (posted: PostedMessage, key: string) => Response | undefined {
  const { limits } = security;
  // Without configured scopes no message can lack one: nothing to work out per request.
  const scoped = hasScopes(scopes);
  return (posted, key) => {
    const { message, sessionId, protocolVersion, caller, log } = posted;
    const id: JsonRpcId | null = "id" in message ? message.id : null;
    const method = "method" in message ? message.method : "";
    noteRequest(log, message, wireOf(message, sessionId, protocolVersion), sessionId);
    // Per method and per tool, before anything reaches the upstream or the task store.
    const refused = scoped ? insufficientScope(scopesFor(scopes, message, posted.mcpName), caller.scopes, security.realm, resource) : undefined;
    if (refused) {
      security.audit.record("auth.failed", caller.principal, { mode: security.auth.mode, reason: "insufficient scope", method }, log);
      return refused.toResponse(id);
    }
    // Draining: the load balancer has seen /readyz fail; a new session belongs on another replica.
    if (health.draining() && method === "initialize") return new GatewayError("shutting_down").toResponse(id);
    return limits.rate(key, method, log);
  };
}

/** The front's request for a posted message, on behalf of its caller's principal. */
export function frontRequestOf(posted: PostedMessage): FrontRequest {
  return {
    message: posted.message,
    accepts: posted.accepts,
    sessionId: posted.sessionId,
    protocolVersion: posted.protocolVersion,
    mcpMethod: posted.mcpMethod,
    mcpName: posted.mcpName,
    header: posted.header,
    principal: posted.caller.principal,
    log: posted.log,
  };
}

/** Limits count per principal; without auth per legacy session, and all modern callers as one. */
export function limitKey(principal: string | undefined, sessionId: string | undefined): string {
  return principal ?? (sessionId ? `session:${sessionId.slice(0, 100)}` : "anonymous");
}
