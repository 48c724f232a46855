/**
 * When a pool (`isolation: pool`) starts one more process for the calls that wait for one. A new
 * process costs a spawn, an `initialize`, a cold JIT and its memory (tens of MiB for a Node
 * server): far more than a quick call. So the pool grows for two reasons only, one process at a
 * time, never beyond `poolSize`:
 *
 * - **stalled**: no process came back for `STALL_MS` while calls wait: the calls in flight are
 *   slow, and a call beside them should not wait for them (three long calls and one that asks).
 * - **crowded**: over a window of `CROWDED_MS`, the processes that came back found on average at
 *   least `CROWDED_WAITING_PER_PROCESS` calls waiting per process in use (a call waits two whole
 *   calls or more before it runs): a steady load of quick calls, more than the processes can take
 *   in turn. A burst shorter than the window spawns nothing; the pool settles where fewer wait,
 *   a few processes for a few dozen concurrent calls. On one shared core every process more also
 *   costs CPU per call (each runs colder), so the pool grows for waits, not to match the load.
 */
export const STALL_MS = 100;
export const CROWDED_MS = 500;
export const CROWDED_WAITING_PER_PROCESS = 2;

export class GrowthRule {
  /** The current window: when it began (performance.now()), and the calls waiting and processes in use each return found. */
  private windowStart: number | undefined;
  private waitingSum = 0;
  private inUseSum = 0;
  /** When a process last came back clean: calls are moving. */
  lastReturnAt = 0;

  /** A process came back with `waiting` calls queued and `inUse` processes out, itself included. */
  returned(now: number, waiting: number, inUse: number): boolean {
    this.lastReturnAt = now;
    // A window left open by a burst long gone says nothing about now.
    if (this.windowStart === undefined || now - this.windowStart > 2 * CROWDED_MS) this.restart(now);
    this.waitingSum += waiting;
    this.inUseSum += inUse;
    if (now - this.windowStart! < CROWDED_MS) return false;
    const crowded = this.waitingSum >= CROWDED_WAITING_PER_PROCESS * this.inUseSum;
    this.restart(now);
    return crowded;
  }

  /** The pool grew (or tried to): crowding is measured afresh with the new process. */
  grew(): void {
    this.windowStart = undefined;
  }

  /** How long until a call waiting since `since` counts as stalled (0: it does now). */
  stallDueInMs(now: number, since: number): number {
    return Math.max(0, Math.max(this.lastReturnAt, since) + STALL_MS - now);
  }

  private restart(now: number): void {
    this.windowStart = now;
    this.waitingSum = 0;
    this.inUseSum = 0;
  }
}
