import { createHash } from "node:crypto";
import type { LogContext } from "./log-context.js";
import type { Logger } from "./logger.js";

export type AuditEvent = "task.create" | "task.end" | "task.cancel" | "task.lookup_failed" | "auth.failed" | "limit.refused" | "limit.unchecked";

/**
 * Audit lines: one JSON log line per security-relevant event, `{"audit":"task.create", …}`.
 * The principal is logged only as a hash (enough to follow one caller across lines and replicas,
 * not to learn who it is), and never a token, a header value or a tool's arguments.
 */
export class Audit {
  constructor(private readonly logger: Logger) {}

  /** `context`: the front request the event happened in (its id, method and tool), when there is one. */
  record(event: AuditEvent, principal: string | undefined, fields: Record<string, string | number | boolean | undefined> = {}, context?: LogContext): void {
    this.logger.info(
      Object.assign({}, context, { audit: event, principal: principal === undefined ? undefined : principalHash(principal) }, fields),
      `audit ${event}`,
    );
  }
}

/** First 16 hex digits of SHA-256: stable across replicas, one-way. */
export function principalHash(principal: string): string {
  return createHash("sha256").update(principal).digest("hex").slice(0, 16);
}
