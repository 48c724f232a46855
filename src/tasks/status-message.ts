/**
 * Upstream progress as a task's statusMessage, e.g. "Running tests (128/342)".
 * The upstream's own message leads; the counts follow when there are any.
 */
export function statusFromProgress(params: Record<string, unknown>): string | undefined {
  const { progress, total, message } = params;
  const text = typeof message === "string" && message.trim() ? message.trim().slice(0, 500) : undefined;
  if (typeof progress !== "number") return text;
  const counts = typeof total === "number" ? `${progress}/${total}` : `${progress}`;
  return text ? `${text} (${counts})` : `Progress ${counts}`;
}

/**
 * The counts `statusFromProgress` put at the end of a message ("… (3/5)", "Progress 3/5"), for a
 * progress bar; undefined when the upstream sent no total.
 */
export function progressOfStatus(statusMessage: string | undefined): { progress: number; total: number } | undefined {
  const match = statusMessage === undefined ? null : /(?:\(|^Progress )(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)\)?$/.exec(statusMessage);
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
