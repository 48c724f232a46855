import { pino, type Logger } from "pino";
import { currentLogContext } from "./log-context.js";

export type { Logger };

/**
 * Secrets never reach a log line: credentials in headers and config, tokens. Tool arguments are
 * not logged at all at info level (only lifecycle facts: ids, upstream, tool, dialect, status).
 */
const REDACT = [
  "authorization", "*.authorization", "headers.authorization", "*.headers.authorization",
  "cookie", "*.cookie", "token", "*.token", "adminToken", "*.adminToken", "arguments", "*.arguments",
];

/** JSON lines on stderr, so stdout stays free (the demo server speaks MCP on it). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: { service: "taskgate", ...bindings },
      formatters: { level: (label) => ({ level: label }) },
      // The request id (and method, upstream) of the request being served, on every line.
      mixin: () => ({ ...currentLogContext() }),
      redact: { paths: REDACT, censor: "[redacted]" },
    },
    pino.destination(2),
  );
}

/** For tests and library use: drops everything. */
export const silentLogger: Logger = pino({ level: "silent" });
