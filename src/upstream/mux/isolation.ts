import type { UpstreamConfig } from "../../config/schema.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { UpstreamConnector } from "../connector.js";
import { StdioPool, type PoolOptions } from "../stdio/stdio-pool.js";
import { Bulkhead } from "./bulkhead.js";
import { ListChangedHub } from "./list-changed.js";
import { PoolCaller, type PooledProcess, type SharedQuietCalls } from "./pool-caller.js";
import { QuietLane } from "./quiet-lane.js";
import { Relay } from "./relay.js";
import { SessionStreams } from "./session-streams.js";
import type { QuestionPolicy } from "./unowned.js";

/** One upstream's way of running calls: the relay over its home connection, and its pool if it has one. */
export interface UpstreamCalls {
  relay: Relay;
  /** Set for a pooled stdio upstream (isolation pool or per-call). */
  pool?: PoolCaller;
  /** Said once at start, so an operator sees what each upstream costs. */
  describe: Record<string, unknown>;
  /** Warm the pool (its first process starts beside the home process). */
  start(): void;
  /** A pooled upstream is ready (/readyz) once its first process was: a call then runs at once. */
  warmed(): boolean;
}

/**
 * Builds what `upstreams[].isolation` asks for (README: Isolation). An HTTP upstream ties each
 * question to its call by the call's own stream, so it has no pool; its bulkhead is maxInFlight,
 * as for `shared` stdio. A pooled stdio upstream's bulkhead is its pool size.
 */
export function upstreamCalls(u: UpstreamConfig, home: UpstreamConnector, logger: Logger, idPrefix: string, metrics: Metrics): UpstreamCalls {
  const questions: QuestionPolicy = { transport: u.stdio ? "stdio" : "http", roots: u.roots };
  // A list may change in any process of the upstream: one hub for the home relay and the pool's.
  const listChanged = new ListChangedHub();
  const stdio = u.stdio;
  if (!stdio || u.isolation === "shared") {
    const bulkhead = bulkheadOf(u, u.maxInFlight, metrics);
    const relay = new Relay(home, logger, idPrefix, metrics, { bulkhead, questions, listChanged });
    return { relay, describe: { isolation: stdio ? "shared" : "by stream (http)", maxInFlight: u.maxInFlight }, start: () => undefined, warmed: () => true };
  }
  const reuse = u.isolation === "pool";
  const options: PoolOptions = { size: u.poolSize, warm: reuse ? 1 : Math.min(u.perCallPool, u.poolSize), reuse, generation: u.generation };
  const streams = new SessionStreams();
  const pool = new StdioPool<PooledProcess>(u.name, stdio, options, logger, (connector, id) => ({
    connector,
    relay: new Relay(connector, logger.child({ process: id }), `${idPrefix}-p${id}`, metrics, { questions, streams, poolMember: true, listChanged }),
  }));
  metrics.watchPool(u.name, () => pool.counts());
  const alone = bulkheadOf(u, u.poolSize, metrics);
  // The quiet lane's bound is maxInFlight, as shared's is; the queue gauge counts both queues.
  const shared: SharedQuietCalls | undefined =
    reuse && u.shareQuietCalls ? { lane: new QuietLane(pool), bulkhead: bulkheadOf(u, u.maxInFlight, metrics, alone) } : undefined;
  const caller = new PoolCaller(pool, alone, shared);
  // What a pool process says outside its call (list_changed, resources/updated) reaches the front sessions' streams.
  const relay = new Relay(home, logger, idPrefix, metrics, { calls: caller, questions, streams, listChanged });
  return {
    relay,
    pool: caller,
    describe: { isolation: u.isolation, poolSize: u.poolSize, warm: options.warm, ...(reuse ? { shareQuietCalls: u.shareQuietCalls } : {}) },
    start: () => pool.start(),
    warmed: () => pool.warmed,
  };
}

function bulkheadOf(u: UpstreamConfig, limit: number, metrics: Metrics, beside?: Bulkhead): Bulkhead {
  const bulkhead = new Bulkhead(u.name, limit, u.queueTimeoutMs, { waited: (seconds) => metrics.queueWaited(u.name, seconds) });
  metrics.watchQueue(u.name, beside ? () => bulkhead.queued + beside.queued : () => bulkhead.queued);
  return bulkhead;
}
