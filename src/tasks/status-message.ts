/**
 * One progress notification as a task's statusMessage: the upstream's own message when it sent
 * one ("Running tests 128/342"), else the counts ("Progress 128/342"); never both, since a
 * message usually says the counts already.
 */
export function statusFromProgress(params: Record<string, unknown>): string | undefined {
  const { progress, total, message } = params;
  const text = typeof message === "string" && message.trim() ? message.trim().slice(0, 500) : undefined;
  if (text !== undefined || typeof progress !== "number") return text;
  return typeof total === "number" ? `Progress ${progress}/${total}` : `Progress ${progress}`;
}

/**
 * The last counts in a status message ("Progress 3/5", "Slept 3/5 s", "… (3/5)"), for a progress
 * bar; undefined when there are none or no total.
 */
export function progressOfStatus(statusMessage: string | undefined): { progress: number; total: number } | undefined {
  const match = statusMessage === undefined ? null : /(?:^|[\s(:])(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)(?![\d./])(?!.*\d\/\d)/.exec(statusMessage);
  if (!match) return undefined;
  const [progress, total] = [Number(match[1]), Number(match[2])];
  return total > 0 ? { progress: Math.min(progress, total), total } : undefined;
}

/**
 * At most one write per `intervalMs`: the first at once, then the latest value when the interval
 * ends, so the final progress is never lost and a chatty upstream cannot flood the store.
 */
export class Throttle {
  private timer?: NodeJS.Timeout;
  private pending?: string;
  private latest?: string;
  private last = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly write: (value: string) => void,
  ) {}

  push(value: string): void {
    this.pending = value;
    this.latest = value;
    if (this.timer) return;
    const wait = Math.max(0, this.last + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** No more writes; returns the latest value pushed (written or not), for a final write of the caller's own. */
  stop(): string | undefined {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    return this.latest;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.pending === undefined) return;
    const value = this.pending;
    this.pending = undefined;
    this.last = Date.now();
    this.write(value);
  }
}
