import { pino, type Logger } from "pino";
import { currentLogContext } from "./log-context.js";

export type { Logger };

/**
 * Whatever a log line carries under these names is replaced before it is written, as a second
 * line of defence: taskgate itself never logs credentials, headers or tool arguments.
 */
export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers",
  "*.headers",
  "token",
  "*.token",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "cookie",
  "*.cookie",
  "arguments",
  "*.arguments",
  "adminToken",
  "*.adminToken",
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
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    pino.destination(2),
  );
}

/** For tests and library use: drops everything. */
export const silentLogger: Logger = pino({ level: "silent" });
