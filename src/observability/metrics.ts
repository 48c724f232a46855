import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { FastHistogram, type HistogramSeries } from "./fast-histogram.js";
import { LabelGuard } from "./label-guard.js";
import type { Outcome, Wire } from "./request-outcome.js";

/** Seconds; from 1 ms (a Redis read) to 5 minutes (a slow upstream call). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Tasks live seconds to hours (tasks.maxTtlMs). */
const TASK_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];

export type TaskEnd = "completed" | "failed" | "cancelled";

type OperationLabel = "upstream" | "mcp_method_name" | "gen_ai_tool_name" | "error_type" | "wire" | "outcome";

/** Raw name combinations remembered for a one-lookup path; past this many, new ones go through the guard each time. */
const MAX_CACHED_KEYS = 5000;
/** Raw names longer than this (a client's method or tool name) are looked up through the label guard each time. */
const MAX_CACHED_KEY_LENGTH = 512;

/**
 * Every Prometheus series taskgate exports, behind named hooks, one registry per instance (no
 * global state: two gateways in one process, as in tests, keep their own counts). Label values
 * that come from clients (tool and method names) pass through a LabelGuard so a caller cannot
 * grow the series without bound.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly labels = new LabelGuard(200);
  private readonly created: Counter<"upstream" | "tool">;
  private readonly ended: Counter<"upstream" | "tool" | "status">;
  private readonly detach: Histogram<"upstream">;
  private readonly lifetime: Histogram<"upstream" | "status">;
  private readonly upstreamCalls: FastHistogram<"upstream" | "method" | "outcome">;
  private readonly upstreamCallSeries = new Map<string, HistogramSeries<"upstream" | "method" | "outcome">>();
  private readonly tasksGetSeconds: FastHistogram<"upstream">;
  private readonly passthroughSeconds: FastHistogram<"upstream" | "method">;
  private readonly passthroughSeries = new Map<string, HistogramSeries<"upstream" | "method">>();
  private readonly storeErrors: Counter<"operation">;
  private readonly leaseRenewals: Counter;
  private readonly leaseLosses: Counter;
  private readonly recordsLost: Counter;
  private readonly unconfirmed: Counter;
  private readonly reaper: Counter<"action">;
  private readonly sse: Gauge;
  private readonly operations: FastHistogram<OperationLabel>;
  private readonly operationSeries = new Map<string, HistogramSeries<OperationLabel>>();
  /**
   * The series each of the three per-call observations used last, by its raw names: a run of calls
   * alike compares a few strings instead of building, hashing and looking up a key for each.
   */
  private lastOperation:
    | { upstream: string; method: string; tool: string; wire: Wire; outcome: Outcome; errorType: string; series: HistogramSeries<OperationLabel> }
    | undefined;
  private lastUpstreamCall: { upstream: string; method: string; outcome: string; series: HistogramSeries<"upstream" | "method" | "outcome"> } | undefined;
  private lastPassthrough: { upstream: string; method: string; series: HistogramSeries<"upstream" | "method"> } | undefined;
  private readonly queueWait: FastHistogram<"upstream">;
  private readonly queues = new Map<string, () => number>();
  private readonly pools = new Map<string, () => Record<string, number>>();
  private inFlight: () => number = () => 0;

  constructor({ processMetrics = true }: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    this.created = new Counter({
      name: "taskgate_tasks_created_total",
      help: "Tasks created (detached calls), by upstream and tool.",
      labelNames: ["upstream", "tool"],
      registers,
    });
    this.ended = new Counter({
      name: "taskgate_tasks_ended_total",
      help: "Tasks that reached a terminal status on this replica, by upstream, tool and status (completed, failed, cancelled).",
      labelNames: ["upstream", "tool", "status"],
      registers,
    });
    const inFlight = () => this.inFlight();
    new Gauge({
      name: "taskgate_tasks_in_flight",
      help: "Detached upstream calls this replica owns right now.",
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.detach = new Histogram({
      name: "taskgate_detach_seconds",
      help: "From the start of a tools/call to the task handle being written (the client's wait before detaching).",
      labelNames: ["upstream"],
      buckets: BUCKETS,
      registers,
    });
    this.lifetime = new Histogram({
      name: "taskgate_task_duration_seconds",
      help: "A task's whole life on the replica that ended it: from the arrival of the call that became the task (the wait before it detached included) to its terminal status, by upstream and status.",
      labelNames: ["upstream", "status"],
      buckets: TASK_BUCKETS,
      registers,
    });
    // These three are observed on every relayed call: FastHistogram, as the front's own.
    this.upstreamCalls = new FastHistogram(
      "taskgate_upstream_call_duration_seconds",
      "Every request sent upstream, until its answer, by upstream, method and outcome (ok, error).",
      ["upstream", "method", "outcome"],
      BUCKETS,
      this.registry,
    );
    // Observed on every poll: a series looked up by upstream name, no label set hashed.
    this.tasksGetSeconds = new FastHistogram(
      "taskgate_tasks_get_duration_seconds",
      "tasks/get requests on the front side, until the answer.",
      ["upstream"],
      BUCKETS,
      this.registry,
    );
    this.passthroughSeconds = new FastHistogram(
      "taskgate_passthrough_duration_seconds",
      "Requests relayed to the upstream while the client waits (not task calls), by method; its _count is the number of requests.",
      ["upstream", "method"],
      BUCKETS,
      this.registry,
    );
    this.storeErrors = new Counter({
      name: "taskgate_store_errors_total",
      help: "Store operations that failed (store unreachable or a script error), by operation.",
      labelNames: ["operation"],
      registers,
    });
    this.leaseRenewals = new Counter({
      name: "taskgate_lease_renewals_total",
      help: "Renewals of this replica's lease (one a pass, however many calls it holds).",
      registers,
    });
    this.leaseLosses = new Counter({
      name: "taskgate_lease_losses_total",
      help: "Detached calls this replica abandoned because their lease was lost.",
      registers,
    });
    this.recordsLost = new Counter({
      name: "taskgate_task_records_lost_total",
      help: "Tasks whose record the store lost while this replica ran their call (a failover without replication, a flush, an eviction), by upstream.",
      labelNames: ["upstream"],
      registers,
    });
    this.unconfirmed = new Counter({
      name: "taskgate_store_writes_unconfirmed_total",
      help: "Acknowledged writes (a task handle, an answer, a cancel, an outcome) the store's replicas (WAIT), or its primary's AOF fsync (WAITAOF), did not confirm within store.waitTimeoutMs, by store operation.",
      labelNames: ["operation"],
      registers,
    });
    this.reaper = new Counter({ name: "taskgate_reaper_actions_total", help: "Tasks the reaper acted on, by action.", labelNames: ["action"], registers });
    this.sse = new Gauge({ name: "taskgate_sse_streams_open", help: "Server-sent-event responses open on the front side.", registers });
    // OpenTelemetry semantic conventions for MCP, metric mcp.server.operation.duration
    // (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/), in Prometheus naming.
    this.operations = new FastHistogram(
      "mcp_server_operation_duration_seconds",
      "Every front request, from its arrival until its result (or refusal) is sent, by upstream, method (mcp_method_name; GET, DELETE or POST when there is none), tool, error_type (the JSON-RPC code, tool_error, or the HTTP status of a bare refusal), wire (legacy, modern, unknown) and outcome (ok, tool_error, refused_auth, refused_limit, refused_bad_input, or the JSON-RPC error class).",
      ["upstream", "mcp_method_name", "gen_ai_tool_name", "error_type", "wire", "outcome"],
      BUCKETS,
      this.registry,
    );
    const { queues, pools } = this;
    new Gauge({
      name: "taskgate_upstream_queue_length",
      help: "Calls waiting for a free slot on their upstream (the bulkhead: poolSize for a pooled upstream, maxInFlight otherwise).",
      labelNames: ["upstream"],
      registers,
      collect() {
        for (const [upstream, read] of queues) this.set({ upstream }, read());
      },
    });
    this.queueWait = new FastHistogram(
      "taskgate_upstream_queue_wait_seconds",
      "How long each call waited for a free slot on its upstream (0 when one was free), until it started or gave up.",
      ["upstream"],
      BUCKETS,
      this.registry,
    );
    new Gauge({
      name: "taskgate_upstream_pool_processes",
      help: "Members of a pooled upstream by state (processes of a stdio upstream, sessions of an HTTP one): idle (ready), busy (running a call), starting, stopping (being ended after a cancelled or abandoned call). The home process or session is not counted.",
      labelNames: ["upstream", "state"],
      registers,
      collect() {
        for (const [upstream, read] of pools) for (const [state, count] of Object.entries(read())) this.set({ upstream, state }, count);
      },
    });
  }

  /** What `taskgate_upstream_queue_length` reads for `upstream` at each scrape. */
  watchQueue(upstream: string, read: () => number): void {
    this.queues.set(upstream, read);
  }

  queueWaited(upstream: string, seconds: number): void {
    this.queueWait.observe(this.queueWait.seriesFor(upstream, { upstream }), seconds);
  }

  /** What `taskgate_upstream_pool_processes` reads for `upstream` at each scrape. */
  watchPool(upstream: string, read: () => Record<string, number>): void {
    this.pools.set(upstream, read);
  }

  /** What `taskgate_tasks_in_flight` reads at each scrape. */
  setInFlight(read: () => number): void {
    this.inFlight = read;
  }

  taskCreated(upstream: string, tool: string): void {
    this.created.inc({ upstream, tool: this.labels.admit("tool", tool) });
  }

  taskEnded(upstream: string, tool: string, status: TaskEnd, seconds?: number): void {
    this.ended.inc({ upstream, tool: this.labels.admit("tool", tool), status });
    if (seconds !== undefined) this.lifetime.observe({ upstream, status }, seconds);
  }

  detached(upstream: string, seconds: number): void {
    this.detach.observe({ upstream }, seconds);
  }

  upstreamCall(upstream: string, method: string, seconds: number, ok: boolean): void {
    const outcome = ok ? "ok" : "error";
    const last = this.lastUpstreamCall;
    if (last !== undefined && last.upstream === upstream && last.method === method && last.outcome === outcome)
      return this.upstreamCalls.observe(last.series, seconds);
    const series = this.cachedSeries(this.upstreamCallSeries, `${upstream}\n${method}\n${outcome}`, () => {
      const labels = { upstream, method: this.labels.admit("method", method), outcome };
      return this.upstreamCalls.seriesFor(Object.values(labels).join("\n"), labels);
    });
    this.lastUpstreamCall = { upstream, method, outcome, series };
    this.upstreamCalls.observe(series, seconds);
  }

  tasksGet(upstream: string, seconds: number): void {
    this.tasksGetSeconds.observe(this.tasksGetSeconds.seriesFor(upstream, { upstream }), seconds);
  }

  passthrough(upstream: string, method: string, seconds: number): void {
    const last = this.lastPassthrough;
    if (last !== undefined && last.upstream === upstream && last.method === method) return this.passthroughSeconds.observe(last.series, seconds);
    const series = this.cachedSeries(this.passthroughSeries, `${upstream}\n${method}`, () => {
      const labels = { upstream, method: this.labels.admit("method", method) };
      return this.passthroughSeconds.seriesFor(Object.values(labels).join("\n"), labels);
    });
    this.lastPassthrough = { upstream, method, series };
    this.passthroughSeconds.observe(series, seconds);
  }

  /**
   * One front request ended: one map lookup by the raw names, and a few additions. Client-given
   * names pass the label guard only when their label set is first seen.
   */
  operation(upstream: string, method: string, tool: string, wire: Wire, outcome: Outcome, errorType: string, seconds: number): void {
    const last = this.lastOperation;
    if (
      last !== undefined &&
      last.upstream === upstream &&
      last.method === method &&
      last.tool === tool &&
      last.wire === wire &&
      last.outcome === outcome &&
      last.errorType === errorType
    )
      return this.operations.observe(last.series, seconds);
    const key = `${upstream}\n${method}\n${tool}\n${wire}\n${outcome}\n${errorType}`;
    const series = this.cachedSeries(this.operationSeries, key, () => {
      const labels = {
        upstream,
        mcp_method_name: this.labels.admit("method", method),
        gen_ai_tool_name: tool && this.labels.admit("tool", tool),
        error_type: errorType && this.labels.admit("error_type", errorType),
        wire,
        outcome,
      };
      return this.operations.seriesFor(Object.values(labels).join("\n"), labels);
    });
    this.lastOperation = { upstream, method, tool, wire, outcome, errorType, series };
    this.operations.observe(series, seconds);
  }

  /**
   * A series by the raw names it was observed with. Client-given names pass the label guard only
   * when first seen; names past the guard's bound share the "other" series, and past
   * MAX_CACHED_KEYS (or MAX_CACHED_KEY_LENGTH) their raw keys are not kept.
   */
  private cachedSeries<L extends string>(cache: Map<string, HistogramSeries<L>>, key: string, make: () => HistogramSeries<L>): HistogramSeries<L> {
    let series = cache.get(key);
    if (!series) {
      series = make();
      if (cache.size < MAX_CACHED_KEYS && key.length <= MAX_CACHED_KEY_LENGTH) cache.set(key, series);
    }
    return series;
  }

  storeError(operation: string): void {
    this.storeErrors.inc({ operation });
  }

  leaseRenewed(): void {
    this.leaseRenewals.inc();
  }

  taskRecordLost(upstream: string): void {
    this.recordsLost.inc({ upstream });
  }

  storeUnconfirmed(operation: string): void {
    this.unconfirmed.inc({ operation });
  }

  leaseLost(): void {
    this.leaseLosses.inc();
  }

  /** For the reaper: e.g. "failed" (owner gone) or "rerun" (a safe call started again). */
  reaperAction(action: string): void {
    this.reaper.inc({ action });
  }

  sseOpened(): void {
    this.sse.inc();
  }

  sseClosed(): void {
    this.sse.dec();
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Seconds since `startMs` (from performance.now()). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
