import type { Tracked } from "./procs.js";

/** taskgate writes the level as its label (src/observability/logger.ts). */
const WARN_AND_ABOVE = new Set(["warn", "error", "fatal"]);

/**
 * Counts a taskgate's log lines (pino JSON on stderr) by message as they are written: the process
 * keeps only the tail of its output, and a burst writes tens of thousands of lines.
 */
export class LogLines {
  private readonly byMsg = new Map<string, number>();
  private readonly warnByMsg = new Map<string, number>();
  private carry = "";

  constructor(proc: Tracked) {
    proc.proc.stderr?.on("data", (chunk: Buffer) => this.take(chunk.toString()));
  }

  /** Lines whose `msg` is `msg`, so far. */
  count(msg: string): number {
    return this.byMsg.get(msg) ?? 0;
  }

  /** Lines at warn and above, by message, so far. */
  warnings(): Map<string, number> {
    return new Map(this.warnByMsg);
  }

  private take(text: string): void {
    const lines = (this.carry + text).split("\n");
    this.carry = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      let entry: { msg?: unknown; level?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const msg = String(entry.msg);
      this.byMsg.set(msg, (this.byMsg.get(msg) ?? 0) + 1);
      if (WARN_AND_ABOVE.has(String(entry.level))) this.warnByMsg.set(msg, (this.warnByMsg.get(msg) ?? 0) + 1);
    }
  }
}
