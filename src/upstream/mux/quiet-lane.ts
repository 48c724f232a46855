import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import { MCP_NAME_PARAM } from "../../jsonrpc/versions.js";
import type { UpstreamPool } from "./upstream-pool.js";
import type { PooledProcess } from "./pool-caller.js";

/** Runs alone that must each end cleanly and ask nothing before a tool's calls share the lane. */
export const QUIET_AFTER = 5;
/** Tools remembered at most, so that names a client makes up cannot grow the table without bound. */
const MAX_KEYS = 4_096;
const ASKS = -1;

/** What a tool's calls are known by: the method and the tool, prompt or resource it names (the param `Mcp-Name` mirrors). */
export function quietKey(request: JsonRpcRequest): string | undefined {
  const param = MCP_NAME_PARAM[request.method];
  const name = param === undefined ? undefined : request.params?.[param];
  return typeof name === "string" ? `${request.method}\u0000${name}` : undefined;
}

/**
 * Which tools have shown themselves quiet: `QUIET_AFTER` runs in a row, each alone on a process
 * (so a question it asked would have been seen), ended cleanly, asking nothing, however long they
 * took: what a shared process risks is a question, not a long call. A tool seen asking once
 * never shares again; one whose run ends unclean, or that shares a lane that hears a question,
 * starts over.
 */
export class Quietness {
  private readonly runs = new Map<string, number>();

  isQuiet(key: string): boolean {
    return (this.runs.get(key) ?? 0) >= QUIET_AFTER;
  }

  /** A run alone on a process: what it asked is certain. True when this run made the tool quiet. */
  ranAlone(key: string, run: { asked: boolean; quiet: boolean }): boolean {
    const seen = this.runs.get(key);
    if (seen === ASKS) return false;
    if (run.asked || !run.quiet) {
      if (run.asked) this.runs.set(key, ASKS);
      else this.runs.delete(key);
      return false;
    }
    if (seen === undefined && this.runs.size >= MAX_KEYS) return false;
    this.runs.set(key, (seen ?? 0) + 1);
    return (seen ?? 0) + 1 === QUIET_AFTER;
  }

  /** A run on the lane that heard a question it may have asked: back to runs alone. */
  doubt(key: string): void {
    if (this.runs.get(key) !== ASKS) this.runs.delete(key);
  }
}

/** One process of the pool given to the lane, and how many calls it runs now. */
export interface LaneProcess {
  readonly member: PooledProcess;
  calls: number;
  /** Takes no more calls; ended once its last call is over. */
  closed: boolean;
  /** Handed back to the pool to be ended. */
  ended: boolean;
  /** One of its calls was handed to another replica that resumes it in this session: ended without DELETE. */
  keepSession?: boolean;
}

/**
 * The quiet lane: tools known to be quiet share one process of the pool, many calls
 * at once, as `isolation: shared` would run them, instead of a process each. Its questions are
 * held and tied to a call by elimination (elimination.ts). The lane closes, drains and is ended
 * as soon as it heard a question or a call left it running (cancelled, timed out): a later call
 * gets a fresh process. Its bound is `maxInFlight`, like `shared`'s, in a bulkhead of its own.
 */
export class QuietLane {
  private current: LaneProcess | undefined;
  private taking: Promise<LaneProcess> | undefined;

  constructor(private readonly pool: UpstreamPool<PooledProcess>) {}

  /** The open lane's process for one more call, at once; undefined when none is open. */
  enterOpen(): LaneProcess | undefined {
    const lane = this.current;
    if (!lane || !this.usable(lane)) return undefined;
    lane.calls++;
    return lane;
  }

  /** The lane's process for one more call: the open one, or one taken from the pool. */
  async enter(): Promise<LaneProcess> {
    for (;;) {
      // Cleared once settled, in a later turn than it was set even when a process was idle.
      const lane = this.current ?? (await (this.taking ??= this.takeOne().finally(() => (this.taking = undefined))));
      if (this.usable(lane)) {
        lane.calls++;
        return lane;
      }
      this.close(lane);
    }
  }

  /** A call is over. */
  leave(lane: LaneProcess): void {
    lane.calls--;
    if (!this.usable(lane)) this.close(lane);
  }

  /** No more calls: a call on it was cancelled, or it must end. */
  close(lane: LaneProcess): void {
    if (this.current === lane) this.current = undefined;
    lane.closed = true;
    // Never given back for reuse: a handler on it may still run.
    if (lane.calls > 0 || lane.ended) return;
    lane.ended = true;
    this.pool.give(lane.member, false, lane.keepSession === true);
  }

  /** The lane's process when the upstream closes. */
  async closeAll(): Promise<void> {
    const lane = this.current;
    this.current = undefined;
    if (lane) await lane.member.connector.close();
  }

  private usable(lane: LaneProcess): boolean {
    return !lane.closed && lane.member.relay.questions.quiet && lane.member.connector.isReady();
  }

  private async takeOne(): Promise<LaneProcess> {
    const member = this.pool.takeIdle() ?? (await this.pool.take());
    member.relay.questions.holdAmbiguous();
    this.current = { member, calls: 0, closed: false, ended: false };
    return this.current;
  }
}
