import { Agent } from "undici";
import { Exchange, type ExchangeSignal, type ResponseBody } from "./exchange.js";

/** What taskgate reads of an upstream's answer to a POST: status, headers, and the body as bytes. */
export interface UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  header(name: string): string | undefined;
  readonly body: ResponseBody;
  /** Stop reading: a body not read to its end closes its connection rather than poisoning the pool. */
  discard(): Promise<void>;
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  signal: ExchangeSignal;
}

/** upstreams[].http.connectTimeoutMs when omitted: long enough for a slow TLS handshake, short enough to fail over. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The HTTP client's own limits on one exchange. undici's defaults (300 s for the response headers,
 * 300 s between body chunks) would cut any call longer than five minutes: an upstream answering one
 * JSON body sends its headers only with the result, and an SSE stream may stay silent while a tool
 * runs. Neither limit is ours to set: a call is bounded by upstreams[].http.requestTimeoutMs when
 * given, else by its task's TTL. Only making the connection has a limit of its own.
 */
export const EXCHANGE_LIMITS = { headersTimeout: 0, bodyTimeout: 0 } as const;

/**
 * The HTTP client of the relay's hot path: one keep-alive connection pool per upstream, undici's
 * `dispatch` with a handler of our own (Exchange). It replaced `fetch`, whose WHATWG Request,
 * Response and web streams cost several times the rest of a relayed call, then undici's `request`,
 * whose Readable body and async resource were most of what was left.
 */
export class UpstreamClient {
  private readonly agent: Agent;

  constructor(connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS) {
    this.agent = new Agent({ ...EXCHANGE_LIMITS, connect: { timeout: connectTimeoutMs } });
  }

  /** The origin and path of the last URL asked for: an upstream's URL is the same on every call. */
  private last: { url: string; origin: string; path: string } | undefined;

  private target(url: string): { origin: string; path: string } {
    if (this.last?.url !== url) {
      const parsed = new URL(url);
      this.last = { url, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    }
    return this.last;
  }

  post(url: string, options: PostOptions): Promise<UpstreamResponse> {
    return this.send(url, "POST", options.headers, options.signal, options.body);
  }

  /** A GET stream (the session's, or a request's resumed with Last-Event-ID): same pool, same limits. */
  get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<UpstreamResponse> {
    return this.send(url, "GET", headers, signal);
  }

  private send(url: string, method: "GET" | "POST", headers: Record<string, string>, signal: ExchangeSignal, body?: string): Promise<UpstreamResponse> {
    // The limits go with each request as well as on the Agent: a request's own values win over any dispatcher's.
    // The Agent's own `dispatch`, not undici's top-level `request`, which parses the URL again and copies
    // the options with a spread that, on Node 20, kept each request alive through two scavenges
    // (docs/contributing/performance.md#spread-then-add).
    const { origin, path } = this.target(url);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(signal, (err, response) => (err ? reject(err) : resolve(response!)));
      this.agent.dispatch({ origin, path, method, headers, body, ...EXCHANGE_LIMITS }, exchange);
    });
  }

  /** In-flight requests are aborted by their own signals; this frees the idle connections. */
  close(): void {
    void this.agent.destroy().catch(() => undefined);
  }
}
