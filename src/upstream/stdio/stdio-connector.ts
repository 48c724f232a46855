import type { StdioUpstreamConfig } from "../../config/schema.js";
import type { JsonRpcMessage } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import { Backoff, RetryLoop } from "../backoff.js";
import { UpstreamError } from "../connector.js";
import { CoreConnector } from "../core-connector.js";
import type { GenerationSetting } from "../negotiate.js";
import { SessionCore } from "../session-core.js";
import { reapGroup, spawnUpstream, stopUpstream, type ExitInfo, type UpstreamProcess } from "./process.js";
import { readMessages } from "./stdout-reader.js";
import { StderrLog } from "./stderr-log.js";
import { coalescedWrite, whenWritable } from "./coalesced-write.js";

const INITIALIZE_TIMEOUT_MS = 30_000;

/**
 * One long-lived child process speaking newline-delimited JSON-RPC, restarted with backoff
 * whenever it exits until `close()`. Every restart is a new upstream session, initialized again.
 */
export class StdioConnector extends CoreConnector {
  protected readonly core: SessionCore;
  private readonly retry: RetryLoop;
  private proc: UpstreamProcess | undefined;
  private launching: Promise<void> | undefined;
  private readySince: number | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    name: string,
    private readonly config: StdioUpstreamConfig,
    private readonly logger: Logger,
    generation?: GenerationSetting,
    /** What its `initialize` declares (a pool member's caller profile); taskgate's own when absent. */
    clientCapabilities?: Record<string, unknown>,
  ) {
    super(name);
    const options = { name, logger, initializeTimeoutMs: INITIALIZE_TIMEOUT_MS, generation, config, clientCapabilities };
    this.core = new SessionCore(options, { send: (m) => this.write(m), sendRequest: (m, _onBehalf, failed) => this.post(m, failed) });
    const backoff = new Backoff(config.restartInitialDelayMs, config.restartMaxDelayMs);
    this.retry = new RetryLoop(() => this.launch(), backoff, logger);
  }

  /** Rejects when the first launch fails, but keeps trying in the background (so /readyz can recover). */
  async start(): Promise<void> {
    try {
      await this.launch();
    } catch (err) {
      this.retry.kick();
      const prefix = `cannot start upstream '${this.name}'`;
      const detail = err instanceof Error ? err.message : String(err);
      if (detail.startsWith(prefix)) throw err; // a spawn failure says so already
      throw new UpstreamError(`${prefix}: ${detail}`, err instanceof UpstreamError ? err.reason : "exited");
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Bytes written to the child that it has not read yet (at most its pipe's high-water mark and one message). */
  unreadBytes(): number {
    return this.proc?.stdin.writableLength ?? 0;
  }

  /** The current child's process group id (= its pid), for operators and tests. */
  pid(): number | undefined {
    return this.proc?.pid;
  }

  private launch(): Promise<void> {
    const run = this.spawnAndInitialize();
    this.launching = run;
    return run;
  }

  private async spawnAndInitialize(): Promise<void> {
    if (this.proc && !this.proc.hasExited()) await stopUpstream(this.proc, this.config.shutdownGraceMs);
    const proc = await spawnUpstream(this.name, this.config).catch((err: UpstreamError) => {
      this.core.markDown(err, { failPending: false }); // so lastError() says why
      throw err;
    });
    this.attach(proc);
    try {
      if (this.closing) throw new UpstreamError(`upstream '${this.name}' is closed`, "closed");
      await this.core.handshake();
      this.readySince = Date.now();
    } catch (err) {
      // Alive but unusable (refused or never answered initialize): it goes, and the loop retries.
      if (!proc.hasExited()) await stopUpstream(proc, this.config.shutdownGraceMs);
      throw err;
    }
  }

  private attach(proc: UpstreamProcess): void {
    this.proc = proc;
    const stderr = new StderrLog(proc.stderr, this.logger);
    readMessages(this.name, proc.stdout, this.config, this.logger, (message) => this.core.receive(message), this.core);
    void proc.finished.then((info) => this.onExit(proc, info, stderr));
  }

  private onExit(proc: UpstreamProcess, info: ExitInfo, stderr: StderrLog): void {
    void reapGroup(proc.pid, this.config.shutdownGraceMs);
    if (this.proc !== proc) return;
    this.proc = undefined;
    if (this.closing) return; // close() already said why nothing works any more
    const error = new UpstreamError(exitMessage(info, stderr.recentLines().at(-1)), "exited");
    this.core.markDown(error, { failPending: true });
    this.logger.warn({ ...info, stderrTail: stderr.recentLines() }, "upstream process exited; restarting");
    // Only a child that stayed up a while earns a quick restart; a crash loop keeps backing off.
    const stableMs = this.readySince === undefined ? 0 : Date.now() - this.readySince;
    if (stableMs >= this.config.restartMaxDelayMs) this.retry.backoff.reset();
    this.readySince = undefined;
    this.retry.kick();
  }

  private async shutdown(): Promise<void> {
    this.retry.stop();
    this.core.markDown(new UpstreamError(`upstream '${this.name}' is closed`, "closed"), { failPending: true });
    await this.launching?.catch(() => undefined);
    const proc = this.proc;
    if (proc && !proc.hasExited()) await stopUpstream(proc, this.config.shutdownGraceMs);
    else if (proc) await proc.finished;
  }

  private write(message: JsonRpcMessage): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.hasExited()) return Promise.reject(new UpstreamError(`upstream '${this.name}' has no running process`, "exited"));
    // A child that reads slower than it is written to: the message waits its turn here,
    // unserialized, rather than piling up in the pipe's buffer (Node's Writable backpressure).
    return new Promise((resolve, reject) =>
      whenWritable(
        proc.stdin,
        () => this.writeNow(proc, message, resolve, reject),
        () => reject(new UpstreamError(`upstream '${this.name}' has no running process`, "exited")),
      ),
    );
  }

  /** write() without its promise: `failed` hears what would have rejected it. */
  private post(message: JsonRpcMessage, failed: (err: Error) => void): void {
    const proc = this.proc;
    if (!proc || proc.hasExited()) return failed(new UpstreamError(`upstream '${this.name}' has no running process`, "exited"));
    whenWritable(
      proc.stdin,
      () => this.writeNow(proc, message, written, failed),
      () => failed(new UpstreamError(`upstream '${this.name}' has no running process`, "exited")),
    );
  }

  private writeNow(proc: UpstreamProcess, message: JsonRpcMessage, resolve: () => void, reject: (err: Error) => void): void {
    coalescedWrite(proc.stdin, `${JSON.stringify(message)}\n`, (err) => {
      if (!err) return resolve();
      // A write to a child that just died fails with EPIPE (writes of a turn are flushed
      // together, so this can come after the child was killed): its exit, which fails every
      // call in flight with the exit status, is the better answer. Only a child that stays
      // up after a failed write is reported by the write error.
      const failed = () => reject(new UpstreamError(`cannot write to upstream '${this.name}': ${err.message}`, "exited"));
      const timer = setTimeout(failed, WRITE_FAILURE_EXIT_WAIT_MS);
      timer.unref();
      void proc.exited.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

const MAX_STDERR_IN_MESSAGE = 300;
const written = (): void => undefined;
/** After a failed write, how long the child's exit may take to be the one that reports it. */
const WRITE_FAILURE_EXIT_WAIT_MS = 1_000;

/** The last stderr line usually says why (a missing module, a bad flag): worth putting in the message. */
function exitMessage(info: ExitInfo, lastStderr: string | undefined): string {
  const base = `upstream process exited (code ${info.code}, signal ${info.signal})`;
  return lastStderr ? `${base}: ${lastStderr.slice(0, MAX_STDERR_IN_MESSAGE)}` : base;
}
