import { randomBytes } from "node:crypto";
import { encodeTime } from "ulid";

/**
 * Task ids: a 10-character time prefix (sortable, handy in logs) and 128 bits from the CSPRNG,
 * base64url. The ids act as bearer handles on the modern wire (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, Security), so the random part
 * is what matters; it is never derived from a counter.
 */
export function newTaskId(now: number = Date.now()): string {
  return `${encodeTime(now, 10)}${randomBytes(16).toString("base64url")}`;
}

export function newLeaseToken(): string {
  return randomBytes(16).toString("base64url");
}
