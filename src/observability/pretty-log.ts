/**
 * Log lines for a person at a terminal: one line per event, `time LEVEL message key=value …`,
 * made from the JSON line pino would have written, so both formats carry the same fields.
 */

const LEVEL_NAMES: Record<string, string> = {
  trace: "TRACE",
  debug: "DEBUG",
  info: "INFO ",
  warn: "WARN ",
  error: "ERROR",
  fatal: "FATAL",
};
const COLOURS: Record<string, string> = { trace: "90", debug: "90", info: "32", warn: "33", error: "31", fatal: "35" };
/** Fields every line has, or that the line shows in its own place. */
const OMITTED = new Set(["level", "time", "msg", "service", "pid", "hostname"]);
/** A value longer than this is cut: a line is for reading, the JSON format keeps everything. */
const MAX_VALUE_CHARS = 200;

export interface PrettyOptions {
  colour: boolean;
}

/** One JSON log line (as pino writes it) as one human line, with its newline. */
export function prettyLine(json: string, { colour }: PrettyOptions): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const level = String(entry["level"] ?? "info");
  const name = LEVEL_NAMES[level] ?? level.toUpperCase().padEnd(5);
  const shown = colour ? `\u001b[${COLOURS[level] ?? "0"}m${name}\u001b[0m` : name;
  const time = typeof entry["time"] === "number" ? new Date(entry["time"]).toISOString().slice(11, 23) : "";
  const fields = Object.entries(entry)
    .filter(([key, value]) => !OMITTED.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${format(key, value)}`);
  return `${[time, shown, String(entry["msg"] ?? ""), ...fields].filter(Boolean).join(" ")}\n`;
}

function format(key: string, value: unknown): string {
  // An error shows its message; its stack is in the JSON format.
  if (key === "err" && value && typeof value === "object" && "message" in value) return quote(String((value as { message: unknown }).message));
  if (typeof value === "string") return quote(value);
  return cut(JSON.stringify(value) ?? String(value));
}

function quote(text: string): string {
  const short = cut(text);
  return /^[^\s"=]+$/.test(short) ? short : JSON.stringify(short);
}

function cut(text: string): string {
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** A pino destination that writes each line, made human, to a file descriptor's stream. */
export function prettyDestination(out: NodeJS.WritableStream, options: PrettyOptions): { write(line: string): boolean } {
  return { write: (line: string) => out.write(prettyLine(line, options)) };
}
