/**
 * The store format: how tasks, leases and indexes are laid out in the shared store, recorded in
 * the store so that replicas of two versions on one store either work together or one refuses,
 * naming both formats (docs/operations/upgrading.md#the-store-format).
 *
 * History (the page above keeps it for operators):
 *   1  a lease per task, the live index `{live:<n>}` (never recorded)
 *   2  a lease per replica, tasks held under its token `{held:<token>}`; recorded in `{format}`
 */
export const STORE_FORMAT = 2;
/**
 * The oldest format this build works beside on one store: it reads and reaps the tasks replicas
 * of that format write, and they keep working beside it. A change to the store's contract keeps
 * this at the previous format (or ships a migration), so a rolling upgrade never strands a task.
 */
export const OLDEST_WORKING_FORMAT = 2;

/** What the store says of its format; `version` is the taskgate version that last raised it. */
export interface FormatRecord {
  format: number;
  /** Replicas of this format or later may work on the store. */
  oldest: number;
  version: string;
}

/** What a build asks of the store: its own format and the oldest it works beside. */
export interface FormatClaim extends FormatRecord {}

/**
 * Where a store keeps its format (Redis; the in-process store has no other version to meet).
 * `record` writes the claim when the store has no format yet and raises it when the claim is newer
 * and works beside what is there, in one atomic step, and answers what is recorded afterwards.
 */
export interface StoreFormatRecorder {
  /** Which store, for messages: its key prefix. */
  readonly where: string;
  /** Tasks left by replicas of a format older than any recorded (format 1), still running: counted, at most `limit`. */
  unrecordedTasks(limit: number): Promise<number>;
  record(claim: FormatClaim): Promise<FormatRecord>;
  read(): Promise<FormatRecord | undefined>;
}

/** A replica that cannot work with the store's format: it refuses to start, or to take calls. */
export class StoreFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreFormatError";
  }
}

/** Why `claim` cannot work on a store recorded as `stored`; undefined when it can. */
export function formatRefusal(stored: FormatRecord, claim: FormatClaim): string | undefined {
  const mine = `this replica (taskgate ${claim.version}) writes store format ${claim.format}`;
  const theirs = `the store is in format ${stored.format} (raised by taskgate ${stored.version})`;
  if (stored.format > claim.format && claim.format < stored.oldest)
    return `${theirs}, which replicas of format ${stored.oldest} or later may use; ${mine}. Roll this replica forward to taskgate ${stored.version} or later, or roll every replica back (docs/operations/upgrading.md#rolling-back)`;
  if (stored.format < claim.format && stored.format < claim.oldest)
    return `${theirs}; ${mine} and works beside format ${claim.oldest} or later only. Upgrade through a version that works beside format ${stored.format} first, or replace every replica at once (docs/operations/upgrading.md#the-store-format)`;
  return undefined;
}

/** The claim of this build. */
export function claimOf(version: string): FormatClaim {
  return { format: STORE_FORMAT, oldest: OLDEST_WORKING_FORMAT, version };
}
