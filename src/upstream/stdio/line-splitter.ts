const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits a byte stream into newline-terminated lines without ever holding more than
 * `maxLineBytes` of one line: a longer line is reported once and the rest of it is skipped up to
 * its newline. Lines are decoded only when whole, so multi-byte characters may straddle chunks.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, nl));
      this.finishLine();
      start = nl + 1;
    }
    this.take(chunk.subarray(start));
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    if (this.size > 0) this.finishLine();
    this.skipping = false;
  }

  private take(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    if (this.size + piece.length > this.maxLineBytes) {
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      this.onOverlong();
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private finishLine(): void {
    const wasSkipping = this.skipping;
    const line = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.skipping = false;
    if (wasSkipping) return;
    const end = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
    if (end > 0) this.onLine(line.toString("utf8", 0, end));
  }
}
