import type { LimitsConfig } from "../config/security-schema.js";
import type { Audit } from "../observability/audit.js";
import type { LogContext } from "../observability/log-context.js";
import { GatewayError } from "../wire/errors.js";
import { isEventStream, whenStreamEnds } from "./sse-lifetime.js";
import { replyTag } from "../wire/reply-outcome.js";

/** Keys the rate limiter keeps a bucket for; the least recently used goes first beyond it. */
const MAX_BUCKETS = 10_000;

/**
 * Per-caller limits kept by each replica: open SSE streams (limits.maxSseStreamsPerPrincipal)
 * and the rate of tasks/* requests (limits.taskRequestsPerSecond, a token bucket; https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Security Considerations
 * "SHOULD rate-limit", where the spec leaves it open). Both answer 429 with -32000; the rate limit adds Retry-After.
 * Buckets are kept for the 10,000 callers seen last: one request costs the same however many
 * callers came before, and a caller dropped from the list comes back with a full bucket (one
 * idle for burst / rate seconds has one anyway).
 */
export class CallerLimits {
  private readonly streams = new Map<string, number>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limits: LimitsConfig,
    private readonly audit: Audit,
    private readonly clock: () => number = Date.now,
    private readonly maxBuckets = MAX_BUCKETS,
  ) {}

  /** A 429 response when `key` spent its tasks/* budget; undefined to go on. */
  rate(key: string, method: string, context?: LogContext): Response | undefined {
    const perSecond = this.limits.taskRequestsPerSecond;
    if (perSecond <= 0 || !method.startsWith("tasks/")) return undefined;
    const now = this.clock();
    const burst = this.limits.taskRequestBurst;
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    // Most recently used last (a Map keeps insertion order): the first one is the one to drop.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    this.audit.record("limit.refused", key, { limit: "taskRequestsPerSecond", method }, context);
    const retryAfterS = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
    return new GatewayError("rate_limited", `at most ${perSecond} tasks/* requests a second`).toResponse(null, { "retry-after": String(retryAfterS) });
  }

  /** Throws 429 when `key` holds as many open SSE streams on this replica as it may. */
  checkStreams(key: string, context?: LogContext): void {
    const max = this.limits.maxSseStreamsPerPrincipal;
    if (max > 0 && (this.streams.get(key) ?? 0) >= max) {
      this.audit.record("limit.refused", key, { limit: "maxSseStreamsPerPrincipal" }, context);
      throw new GatewayError("too_many_streams", `at most ${max} open streams`);
    }
  }

  /** Counts an SSE response against `key` until its body ends or the client goes away. */
  track(key: string, response: Response): Response {
    // A reply tagged with its message or error is a plain body: its headers need not be read.
    const tag = replyTag(response);
    if ((tag !== undefined && !(tag instanceof Promise)) || !isEventStream(response)) return response;
    this.streams.set(key, (this.streams.get(key) ?? 0) + 1);
    return whenStreamEnds(response, () => {
      const left = (this.streams.get(key) ?? 1) - 1;
      if (left > 0) this.streams.set(key, left);
      else this.streams.delete(key);
    });
  }

  openStreams(key: string): number {
    return this.streams.get(key) ?? 0;
  }

  /** Callers with a rate bucket kept on this replica (at most 10,000). */
  get bucketCount(): number {
    return this.buckets.size;
  }
}
