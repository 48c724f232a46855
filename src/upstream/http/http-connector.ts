import type { HttpUpstreamConfig } from "../../config/schema.js";
import type { Logger } from "../../observability/logger.js";
import { Backoff, RetryLoop } from "../backoff.js";
import { UpstreamError } from "../connector.js";
import { CoreConnector } from "../core-connector.js";
import type { GenerationSetting } from "../negotiate.js";
import { SessionCore } from "../session-core.js";
import { displayUrl } from "../../util/redact-url.js";
import { HttpLink } from "./link.js";
import { ListenStream } from "./listen-stream.js";

const INITIALIZE_TIMEOUT_MS = 30_000;
const RECONNECT_INITIAL_MS = 200;
const RECONNECT_MAX_MS = 10_000;
const DELETE_TIMEOUT_MS = 2_000;
const GET_STREAM_WAIT_MS = 2_000;

/**
 * One upstream session over Streamable HTTP. A 404 (the upstream forgot the session) is met with
 * a fresh `initialize` and one retry of the request; an unreachable upstream with reconnection
 * in the background, with backoff, until `close()`.
 */
export class HttpConnector extends CoreConnector {
  protected readonly core: SessionCore;
  private readonly link: HttpLink;
  private readonly retry: RetryLoop;
  private listen: ListenStream | undefined;
  private renewing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** `clientCapabilities`: what its `initialize` declares (a pool member's caller profile); taskgate's own when absent. */
  constructor(name: string, config: HttpUpstreamConfig, logger: Logger, generation?: GenerationSetting, clientCapabilities?: Record<string, unknown>) {
    super(name);
    this.link = new HttpLink(name, config, logger, {
      receive: (message, relatedTo, session) => this.core.receive(message, relatedTo, session),
      isWaiting: (id) => this.core.isWaiting(id),
      failRequest: (id, error) => this.core.failRequest(id, error),
      protocolVersion: () => this.core.initializeResult()?.protocolVersion,
      sessionLost: (sessionId) => this.renewSession(sessionId),
      unreachable: (error) => this.onUnreachable(error),
      // The 2026-07-28 wire resumes no stream (no GET, no session): its event ids are not told.
      streamPosition: (id, position) => this.core.generation() === "legacy" && this.core.streamPosition(id, position),
    });
    const initializeTimeoutMs = config.requestTimeoutMs ?? INITIALIZE_TIMEOUT_MS;
    const options = { name, logger, requestTimeoutMs: config.requestTimeoutMs, initializeTimeoutMs, generation, config, probeModern: true, clientCapabilities };
    const link = this.link;
    this.core = new SessionCore(options, {
      send: (m, onBehalf) => link.send(m, onBehalf),
      sendRequest: (m, onBehalf, failed) => link.sendRequest(m, onBehalf, failed),
      release: (id) => link.release(id),
      abort: (id) => link.abort(id),
      resumes: true,
      session: () => link.sessionId,
    });
    this.retry = new RetryLoop(() => this.connect(), new Backoff(RECONNECT_INITIAL_MS, RECONNECT_MAX_MS), logger);
    logger.debug({ url: displayUrl(config.url) }, "http upstream configured");
  }

  /** Rejects when the first connection fails, but keeps trying in the background. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      this.retry.kick();
      const detail = err instanceof Error ? err.message : String(err);
      throw new UpstreamError(`cannot start upstream '${this.name}': ${detail}`, err instanceof UpstreamError ? err.reason : "unreachable");
    }
  }

  close(options: { keepSession?: boolean } = {}): Promise<void> {
    this.closing ??= this.shutdown(options.keepSession === true);
    return this.closing;
  }

  override session(): string | undefined {
    return this.link.sessionId;
  }

  /** A new session: the old one's id and GET stream go, `initialize` runs again. */
  private async connect(): Promise<void> {
    if (this.closing) throw new UpstreamError(`upstream '${this.name}' is closed`, "closed");
    this.listen?.stop();
    this.link.sessionId = undefined;
    await this.core.handshake();
    if (this.closing) return; // closed while initializing: no stream may outlive close()
    // The 2026-07-28 wire has no GET stream (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
    if (this.core.generation() === "modern") return;
    const listen = new ListenStream(this.link);
    this.listen = listen;
    listen.start();
    // Ready once the GET stream is open, so a question asked outside any request right after (a
    // pooled session's call asking through `server.elicitInput`) finds it; bounded, since a server
    // may hold its GET answer back until it has something to send.
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, GET_STREAM_WAIT_MS)));
    await Promise.race([listen.opened, waited]).finally(() => clearTimeout(timer));
  }

  /** Every request that met the 404 waits for the same renewal; a late 404 of an old session waits for nothing. */
  private renewSession(lostSessionId: string): Promise<void> {
    if (this.renewing) return this.renewing;
    if (this.link.sessionId !== lostSessionId) return Promise.resolve();
    const lost = new UpstreamError(`upstream '${this.name}' forgot its session (HTTP 404); initializing a new one`, "closed");
    this.core.markDown(lost, { failPending: false });
    this.renewing = this.connect()
      .catch((err: unknown) => {
        this.retry.kick();
        throw err;
      })
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private onUnreachable(error: UpstreamError): void {
    if (this.closing) return;
    // Streams already open keep their chance to finish: only new work waits for the reconnection.
    this.core.markDown(error, { failPending: false });
    this.listen?.stop();
    this.retry.kick();
  }

  private async shutdown(keepSession: boolean): Promise<void> {
    this.retry.stop();
    this.listen?.stop();
    const sessionId = this.link.sessionId;
    this.core.markDown(new UpstreamError(`upstream '${this.name}' is closed`, "closed"), { failPending: true });
    this.link.close();
    if (sessionId !== undefined && !keepSession) await this.link.deleteSession(sessionId, DELETE_TIMEOUT_MS).catch(() => undefined);
  }
}
