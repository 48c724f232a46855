const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** What is kept of each end of an overlong line: enough for the JSON-RPC envelope around the id. */
const EDGE_BYTES = 256;

/** The ends of a line too long to keep, for telling whose answer it was. */
export interface OverlongLine {
  head: string;
  tail: string;
}

/**
 * Splits a byte stream into newline-terminated lines without ever holding more than
 * `maxLineBytes` of one line: a longer line is skipped up to its newline, keeping only its first
 * and last EDGE_BYTES, and reported once at its end. Lines are decoded only when whole, so
 * multi-byte characters may straddle chunks.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping?: { head: Buffer; tail: Buffer };

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: (line: OverlongLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      // A whole line within this chunk (most are) is decoded from it, without joining it first.
      if (this.size === 0 && !this.skipping && nl - start <= this.maxLineBytes) this.emit(chunk, start, nl);
      else {
        this.take(chunk.subarray(start, nl));
        this.finishLine();
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    if (this.size > 0 || this.skipping) this.finishLine();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.tail = lastBytes(Buffer.concat([this.skipping.tail, piece]));
      return;
    }
    if (this.size + piece.length > this.maxLineBytes) {
      const all = [...this.parts, piece];
      this.skipping = { head: firstBytes(all), tail: lastBytes(Buffer.concat(all.slice(-2))) };
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private finishLine(): void {
    const skipped = this.skipping;
    const line = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.skipping = undefined;
    if (skipped) return this.onOverlong({ head: skipped.head.toString("utf8"), tail: skipped.tail.toString("utf8") });
    this.emit(line, 0, line.length);
  }

  /** The line held in `bytes` from `start` up to `end`, without its carriage return; an empty one is skipped. */
  private emit(bytes: Buffer, start: number, end: number): void {
    const last = end > start && bytes[end - 1] === CARRIAGE_RETURN ? end - 1 : end;
    if (last > start) this.onLine(bytes.toString("utf8", start, last));
  }
}

function lastBytes(buffer: Buffer): Buffer {
  return buffer.length <= EDGE_BYTES ? Buffer.from(buffer) : Buffer.from(buffer.subarray(buffer.length - EDGE_BYTES));
}

/** The first EDGE_BYTES of the pieces, without joining all of them. */
function firstBytes(pieces: Buffer[]): Buffer {
  const head: Buffer[] = [];
  let size = 0;
  for (const piece of pieces) {
    if (size >= EDGE_BYTES) break;
    head.push(piece.subarray(0, EDGE_BYTES - size));
    size += head[head.length - 1]!.length;
  }
  return Buffer.concat(head);
}
