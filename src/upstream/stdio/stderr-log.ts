import type { Readable } from "node:stream";
import type { Logger } from "../../observability/logger.js";
import { LineSplitter } from "./line-splitter.js";

const MAX_STDERR_LINE_BYTES = 8 * 1024;
const TAIL_LINES = 20;
const LOOKS_LIKE_TROUBLE = /\b(error|fatal|panic|exception|traceback|warn(ing)?)\b/i;

/**
 * The child's stderr, line by line, into our log: lines that look like trouble at warn, the rest
 * at debug. Longer lines than 8 KiB are skipped; the last few are kept to explain an unexpected exit.
 */
export class StderrLog {
  private readonly tail: string[] = [];
  private readonly splitter: LineSplitter;

  constructor(
    stream: Readable,
    private readonly logger: Logger,
  ) {
    this.splitter = new LineSplitter(
      MAX_STDERR_LINE_BYTES,
      (line) => this.line(line),
      () => this.line("[stderr line longer than 8 KiB skipped]"),
    );
    stream.on("data", (chunk: Buffer) => this.splitter.push(chunk));
    stream.on("end", () => this.splitter.end());
  }

  recentLines(): string[] {
    return [...this.tail];
  }

  private line(line: string): void {
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    if (LOOKS_LIKE_TROUBLE.test(line)) this.logger.warn({ stderr: line }, "upstream stderr");
    else this.logger.debug({ stderr: line }, "upstream stderr");
  }
}
