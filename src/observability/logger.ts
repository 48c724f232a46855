import { pino, type Logger } from "pino";
import { prettyDestination } from "./pretty-log.js";

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

export type LogFormat = "auto" | "json" | "pretty";

/** Whether lines are for a person: `auto` asks whether stderr is a terminal. */
export function chooseFormat(format: LogFormat, isTTY: boolean): "json" | "pretty" {
  return format === "auto" ? (isTTY ? "pretty" : "json") : format;
}

export interface LogOutput {
  format: LogFormat;
  /** NO_COLOR is set in the environment (https://no-color.org). */
  noColour: boolean;
}

/** Log lines on stderr, so stdout stays free (the demo server speaks MCP on it). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, output: LogOutput = { format: "json", noColour: true }): Logger {
  const isTTY = process.stderr.isTTY === true;
  const destination =
    chooseFormat(output.format, isTTY) === "pretty" ? prettyDestination(process.stderr, { colour: isTTY && !output.noColour }) : pino.destination(2);
  return pino(
    {
      level,
      base: { service: "taskgate", ...bindings },
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    destination,
  );
}

/** For tests and library use: drops everything. */
export const silentLogger: Logger = pino({ level: "silent" });
