import type { StdioUpstreamConfig } from "../../config/schema.js";
import type { Logger } from "../../observability/logger.js";
import { Backoff } from "../backoff.js";
import { StdioConnector } from "./stdio-connector.js";

/**
 * Warm, initialized upstream processes for `isolation: per-call`: each is taken by one call and
 * closed (the stdio kill ladder) when that call ends, so everything the process says belongs to
 * that call. `size` are kept ready so a call does not wait for a spawn and a handshake; when none
 * is ready, one is started for the caller. Spawning and killing stay in the stdio connector.
 */
export class StdioPool {
  private readonly ready: StdioConnector[] = [];
  private readonly starting = new Set<Promise<void>>();
  private readonly backoff: Backoff;
  private next = 0;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly config: StdioUpstreamConfig,
    private readonly size: number,
    private readonly logger: Logger,
  ) {
    this.backoff = new Backoff(config.restartInitialDelayMs, config.restartMaxDelayMs);
  }

  /** Fill the pool in the background; failures are logged and retried with backoff. */
  start(): void {
    this.refill();
  }

  /** A started process of its own for one call; rejects when one cannot be started. */
  async take(): Promise<StdioConnector> {
    let connector = this.ready.shift();
    while (connector && !connector.isReady()) {
      void connector.close();
      connector = this.ready.shift();
    }
    this.refill();
    if (connector) return connector;
    const fresh = this.connector();
    await fresh.start().catch(async (err: unknown) => {
      await fresh.close();
      throw err;
    });
    return fresh;
  }

  /** Warm processes waiting for a call (for logs and tests). */
  get warm(): number {
    return this.ready.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled(this.ready.splice(0).map((c) => c.close()));
  }

  private refill(): void {
    while (!this.closed && this.ready.length + this.starting.size < this.size) {
      const warming: Promise<void> = this.warmOne().finally(() => {
        this.starting.delete(warming);
        this.refill();
      });
      this.starting.add(warming);
    }
  }

  private async warmOne(): Promise<void> {
    const connector = this.connector();
    try {
      await connector.start();
      this.backoff.reset();
      if (this.closed) await connector.close();
      else this.ready.push(connector);
    } catch (err) {
      await connector.close();
      const delayMs = this.backoff.next();
      this.logger.warn({ upstream: this.name, err: String((err as Error).message ?? err), retryInMs: delayMs }, "could not start a per-call upstream process");
      // The pool refills once this attempt is over (see refill), after the backoff.
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
    }
  }

  private connector(): StdioConnector {
    const id = ++this.next;
    return new StdioConnector(this.name, this.config, this.logger.child({ perCall: id }));
  }
}
