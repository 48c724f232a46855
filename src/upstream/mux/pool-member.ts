import type { UpstreamConnector } from "../connector.js";

/** What the pool holds per process: the connector, and whatever its user attached to it at birth. */
export interface PoolMember {
  readonly connector: UpstreamConnector;
}

export interface PoolOptions {
  /** Most processes out at once (taken by calls). */
  size: number;
  /** Initialized processes kept ready for the next calls, within `size`. */
  warm: number;
  /** Whether a process that ended its call cleanly goes back for the next one (pool) or is ended (per-call). */
  reuse: boolean;
}

export type PoolState = "idle" | "busy" | "starting" | "stopping";

/**
 * Started, initialized, and past what the server does on `notifications/initialized`: a ping
 * answered after it is a barrier (a server handles its input in order), so a question the server
 * asks at start (the roots/list of the reference filesystem server) arrives before any call is
 * given the process, and is answered as belonging to no call.
 */
export async function started(connector: UpstreamConnector): Promise<void> {
  await connector.start();
  // Any answer will do, an error too: only its place in the stream matters.
  await connector.request({ method: "ping" }).catch(() => undefined);
}
