import { Agent, request } from "undici";

/** What taskgate reads of an upstream's answer to a POST: status, headers, and the body as bytes. */
export interface UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  header(name: string): string | undefined;
  readonly body: AsyncIterable<Uint8Array>;
  /** Stop reading: a body not read to its end closes its connection rather than poisoning the pool. */
  discard(): Promise<void>;
}

export interface PostOptions {
  headers: Headers;
  body: string;
  signal: AbortSignal;
}

/**
 * The HTTP client of the relay's hot path: one keep-alive connection pool per upstream, undici's
 * `request` API. It replaced `fetch`, whose WHATWG Request, Response and web streams cost several
 * times the rest of a relayed call. Same transport behaviour as Node's `fetch` (also undici, with
 * the same default timeouts); only the objects around it are lighter.
 */
export class UpstreamClient {
  private readonly agent = new Agent();

  async post(url: string, options: PostOptions): Promise<UpstreamResponse> {
    const { statusCode, headers, body } = await request(url, {
      method: "POST",
      headers: Object.fromEntries(options.headers),
      body: options.body,
      signal: options.signal,
      dispatcher: this.agent,
    });
    // Whoever reads the body sees its errors; this only keeps an unread one (abandoned by an abort,
    // or discarded) from becoming an uncaught exception.
    body.on("error", () => undefined);
    return {
      status: statusCode,
      ok: statusCode >= 200 && statusCode < 300,
      header: (name) => {
        const value = headers[name];
        return Array.isArray(value) ? value.join(", ") : value;
      },
      body,
      discard: async () => void body.destroy(),
    };
  }

  /** In-flight requests are aborted by their own signals; this frees the idle connections. */
  close(): void {
    void this.agent.destroy().catch(() => undefined);
  }
}
