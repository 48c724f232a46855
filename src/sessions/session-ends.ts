import type { Logger } from "../observability/logger.js";
import { SESSION_ENDED_CHANNEL } from "../store/channels.js";
import type { EventBus, SessionStore } from "../store/contract.js";

/** The longest wait between two looks for sessions that expired while this replica held something for them. */
const MAX_CHECK_INTERVAL_MS = 60_000;

/** What one upstream's front keeps per session on this replica, and how it lets go of it. */
export interface SessionHolder {
  /** Sessions this replica holds state for (a standing stream, resource subscriptions). */
  held(): Iterable<string>;
  /** The session is gone: end what this replica keeps for it. */
  ended(sessionId: string): Promise<void>;
}

/**
 * A legacy-era session ends in one of three ways: a DELETE on this replica (the front ends what it
 * holds at once), a DELETE on another replica, or idle expiry in the store (sessions.idleTtlMs).
 * What this replica keeps for a session (its standing GET stream, its resource subscriptions, which
 * are restored upstream after a restart, and its calls) ends with it the other two ways too: on
 * the session-ended hint another replica publishes, and, for an expiry (or a lost hint), by a
 * look in the store every idleTtlMs / 4 (at most a minute) at the sessions that hold something
 * here.
 */
export class SessionEnds {
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => Promise<void>;
  private checking?: Promise<void>;
  readonly intervalMs: number;

  constructor(
    private readonly bus: EventBus,
    private readonly store: SessionStore,
    idleTtlMs: number,
    private readonly holder: SessionHolder,
    private readonly logger: Logger,
  ) {
    this.intervalMs = Math.max(1, Math.min(Math.floor(idleTtlMs / 4), MAX_CHECK_INTERVAL_MS));
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(SESSION_ENDED_CHANNEL, (id) => void this.endIfHeld(id));
    this.timer = setInterval(() => (this.checking ??= this.check().finally(() => (this.checking = undefined))), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await this.unsubscribe?.().catch(() => undefined);
  }

  private async check(): Promise<void> {
    for (const id of [...this.holder.held()]) {
      const exists = await this.store.hasSession(id).catch((err: unknown) => {
        this.logger.debug({ err }, "could not look for an ended session; looking again later");
        return true;
      });
      if (!exists) await this.end(id);
    }
  }

  private async endIfHeld(id: string): Promise<void> {
    if ([...this.holder.held()].includes(id)) await this.end(id);
  }

  private async end(id: string): Promise<void> {
    await this.holder.ended(id).catch((err: unknown) => this.logger.warn({ err }, "could not end what a gone session held"));
  }
}
