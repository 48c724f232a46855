import type { UpstreamConfig } from "../../config/schema.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { UpstreamConnector } from "../connector.js";
import { HttpConnector } from "../http/http-connector.js";
import { StdioConnector } from "../stdio/stdio-connector.js";
import { Bulkhead } from "./bulkhead.js";
import { ListChangedHub } from "./list-changed.js";
import { PoolCaller, type PooledProcess, type SharedQuietCalls } from "./pool-caller.js";
import { QuietLane } from "./quiet-lane.js";
import { Relay } from "./relay.js";
import { SessionStreams } from "./session-streams.js";
import type { QuestionPolicy } from "./unowned.js";
import { UpstreamPool, type PoolOptions, type PoolSource, type PoolState } from "./upstream-pool.js";
import { ProfilePools } from "./profiles.js";

/** One upstream's way of running calls: the relay over its home connection, and its pool if it has one. */
export interface UpstreamCalls {
  relay: Relay;
  /** Set for a pooled upstream (isolation pool or per-call). */
  pool?: PoolCaller;
  /** Said once at start, so an operator sees what each upstream costs. */
  describe: Record<string, unknown>;
  /** Warm the pool (its first process starts beside the home process). */
  start(): void;
  /** A pooled upstream is ready (/readyz) once its first process was: a call then runs at once. */
  warmed(): boolean;
}

/** An HTTP upstream's pool is bigger by default: a session costs an `initialize` and a GET stream, not a process. */
export const HTTP_POOL_SIZE = 64;
const STDIO_POOL_SIZE = 8;
const HTTP_RETRY_INITIAL_MS = 200;
const HTTP_RETRY_MAX_MS = 10_000;

/**
 * Builds what `upstreams[].isolation` asks for (docs/operations/isolation.md). `shared`: every call on the
 * home connection, bounded by `maxInFlight`. `pool` and `per-call`: each call alone on a member
 * of a pool (a stdio process, or an HTTP session with its own GET stream), so what the upstream
 * asks outside a call's own stream (stdio: anywhere; HTTP: the session's GET stream, where the
 * SDK's `server.elicitInput(...)` goes) belongs to that call. The pool size is the bulkhead.
 * An HTTP upstream that keeps no sessions (no `Mcp-Session-Id`, or the 2026-07-28 wire, where
 * every question comes on its call's own stream) runs its calls on the home connection as
 * `shared` does: a pool would add nothing but handshakes.
 */
export function upstreamCalls(u: UpstreamConfig, home: UpstreamConnector, logger: Logger, idPrefix: string, metrics: Metrics): UpstreamCalls {
  const transport = u.stdio ? "stdio" : "http";
  const questions: QuestionPolicy = { transport, roots: u.roots };
  // A list may change in any process of the upstream: one hub for the home relay and the pool's.
  const listChanged = new ListChangedHub();
  if (u.isolation === "shared") {
    const bulkhead = bulkheadOf(u, u.maxInFlight, metrics);
    watchQueues(u, metrics, [bulkhead]);
    const relay = new Relay(home, logger, idPrefix, metrics, { bulkhead, questions, listChanged });
    return { relay, describe: { isolation: "shared", maxInFlight: u.maxInFlight }, start: () => undefined, warmed: () => true };
  }
  const reuse = u.isolation === "pool";
  const size = u.poolSize ?? (u.stdio ? STDIO_POOL_SIZE : HTTP_POOL_SIZE);
  const options: PoolOptions = { size, warm: reuse ? 1 : Math.min(u.perCallPool, size), reuse };
  const streams = new SessionStreams();
  const pooled: QuestionPolicy = { ...questions, oneCallPerConnection: true };
  const source = poolSource(u);
  const unit = transport === "stdio" ? "process" : "session";
  // One pool per caller profile, all within poolSize: each member declares its callers' capabilities.
  const pools = new ProfilePools(
    u.name,
    size,
    (capabilities, bound, first) => {
      const own: PoolSource = { ...source, connect: (log, id) => source.connect(log, id, capabilities) };
      // Only the first profile (warmed at start) keeps per-call's warm members; another keeps one once used (pool).
      const profileOptions: PoolOptions = first ? options : { ...options, warm: reuse ? 1 : 0 };
      const pool = new UpstreamPool<PooledProcess>(
        u.name,
        own,
        profileOptions,
        logger,
        (connector, id) => ({
          connector,
          relay: new Relay(connector, logger.child({ [unit]: id }), `${idPrefix}-p${id}`, metrics, {
            questions: pooled,
            streams,
            poolMember: true,
            listChanged,
          }),
        }),
        bound,
      );
      return { pool, lane: reuse && u.shareQuietCalls ? new QuietLane(pool) : undefined };
    },
    u.roots !== undefined,
  );
  metrics.watchPool(u.name, () => countsOf(pools));
  const alone = bulkheadOf(u, size, metrics);
  // The quiet lane's bound is maxInFlight, as shared's is; the queue gauge counts both queues.
  const shared: SharedQuietCalls | undefined = reuse && u.shareQuietCalls ? { bulkhead: bulkheadOf(u, u.maxInFlight, metrics) } : undefined;
  const pool = pools.first.pool;
  // Over HTTP the pool serves an upstream that keeps sessions; the calls of one that keeps none stay home.
  const keepsSessions = u.stdio ? undefined : () => home.session() !== undefined;
  const caller = new PoolCaller(pools, alone, shared, keepsSessions, reuse);
  // What a pool member says outside its call (list_changed, resources/updated) reaches the front sessions' streams.
  const bulkhead = keepsSessions ? bulkheadOf(u, u.maxInFlight, metrics) : undefined;
  // The queue gauge counts every queue a call of this upstream may wait in.
  watchQueues(u, metrics, [alone, shared?.bulkhead, bulkhead]);
  const relay = new Relay(home, logger, idPrefix, metrics, { calls: caller, bulkhead, questions, streams, listChanged });
  caller.attachHome(relay);
  // An HTTP pool warms with its first call: whether the upstream keeps sessions is known only then.
  const warmsAtStart = u.stdio !== undefined;
  return {
    relay,
    pool: caller,
    describe: { isolation: u.isolation, poolSize: size, warm: warmsAtStart ? options.warm : 0, ...(reuse ? { shareQuietCalls: u.shareQuietCalls } : {}) },
    start: () => (warmsAtStart ? pool.start() : undefined),
    warmed: () => !warmsAtStart || pool.warmed,
  };
}

/** Members by state, all profiles counted. */
function countsOf(pools: ProfilePools): Record<PoolState, number> {
  const counts: Record<PoolState, number> = { idle: 0, busy: 0, starting: 0, stopping: 0 };
  for (const { pool } of pools.all()) for (const [state, n] of Object.entries(pool.counts()) as Array<[PoolState, number]>) counts[state] += n;
  return counts;
}

/** Where a pool's members come from: processes of the stdio command, or sessions of the HTTP URL. */
function poolSource(u: UpstreamConfig): PoolSource {
  const { stdio, http, name, generation } = u;
  if (stdio)
    return {
      connect: (logger, _id, capabilities) => new StdioConnector(name, stdio, logger, generation, capabilities),
      unit: "process",
      startsTogether: false,
      retryInitialMs: stdio.restartInitialDelayMs,
      retryMaxMs: stdio.restartMaxDelayMs,
    };
  if (!http) throw new Error(`upstream '${name}' has neither stdio nor http`);
  return {
    connect: (logger, _id, capabilities) => new HttpConnector(name, http, logger, generation, capabilities),
    unit: "session",
    startsTogether: true,
    retryInitialMs: HTTP_RETRY_INITIAL_MS,
    retryMaxMs: HTTP_RETRY_MAX_MS,
  };
}

function bulkheadOf(u: UpstreamConfig, limit: number, metrics: Metrics): Bulkhead {
  return new Bulkhead(u.name, limit, u.queueTimeoutMs, { waited: (seconds) => metrics.queueWaited(u.name, seconds) });
}

function watchQueues(u: UpstreamConfig, metrics: Metrics, bulkheads: ReadonlyArray<Bulkhead | undefined>): void {
  const all = bulkheads.filter((b) => b !== undefined);
  metrics.watchQueue(u.name, () => all.reduce((sum, b) => sum + b.queued, 0));
}
