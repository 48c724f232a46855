import { pino, type Logger } from "pino";

export type { Logger };

/** JSON lines on stderr, so stdout stays free (the demo server speaks MCP on it). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    { level, base: { service: "taskgate", ...bindings }, formatters: { level: (label) => ({ level: label }) } },
    pino.destination(2),
  );
}

/** For tests and library use: drops everything. */
export const silentLogger: Logger = pino({ level: "silent" });
