import type { Logger } from "pino";
import { type FormatClaim, type FormatRecord, formatRefusal, StoreFormatError, type StoreFormatRecorder } from "./format.js";

/** Format 1 tasks counted at most, for the message. */
const COUNT_AT_MOST = 100;

/**
 * At start, before any task is made: record this build's format in the store, or refuse to start
 * (StoreFormatError) when the store is in a format it cannot work beside, naming both.
 */
export async function checkStoreFormat(recorder: StoreFormatRecorder, claim: FormatClaim): Promise<FormatRecord> {
  const left = await formatOneRefusal(recorder, claim);
  if (left) throw new StoreFormatError(left);
  const stored = await recorder.record(claim);
  const refusal = formatRefusal(stored, claim);
  if (refusal) throw new StoreFormatError(refusal);
  return stored;
}

/**
 * Running tasks of format 1, which recorded no format and reads no record: found at start, and
 * while serving too, since a replica of that build may start beside this one at any time.
 */
async function formatOneRefusal(recorder: StoreFormatRecorder, claim: FormatClaim): Promise<string | undefined> {
  const left = await recorder.unrecordedTasks(COUNT_AT_MOST);
  if (left === 0) return undefined;
  return (
    `the store (${recorder.where}) holds ${left >= COUNT_AT_MOST ? `${COUNT_AT_MOST} or more` : left} running task${left === 1 ? "" : "s"} of store format 1 ` +
    `(taskgate built before the lease per replica), which cannot run beside this replica (taskgate ${claim.version}, format ${claim.format}): ` +
    "neither version's reaper would see the other's tasks. Replace every replica at once (stop the older ones first), " +
    "or wait until their tasks ended (docs/operations/upgrading.md#from-format-1)"
  );
}

/**
 * While serving: the store's format read again every `intervalMs`. Once a newer replica raised it
 * past what this one works beside, or a replica of format 1 runs tasks beside it, this replica
 * stops taking calls (`refusal` says why; /readyz and new tasks answer with it) and says so in its
 * log, until that is over; a store that cannot be read changes nothing.
 */
export class FormatWatch {
  refusal?: string;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly recorder: StoreFormatRecorder,
    private readonly claim: FormatClaim,
    private readonly logger: Logger,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async check(): Promise<void> {
    try {
      const stored = await this.recorder.read();
      const refusal = (stored && formatRefusal(stored, this.claim)) || (await formatOneRefusal(this.recorder, this.claim));
      if (refusal && refusal !== this.refusal) this.logger.error({ storeFormat: stored, replicaFormat: this.claim }, `refusing calls: ${refusal}`);
      else if (!refusal && this.refusal)
        this.logger.info({ storeFormat: stored, replicaFormat: this.claim }, "taking calls again: the store's format allows this replica");
      this.refusal = refusal;
    } catch {
      // The store did not answer: the lease and /readyz say so; the format is read again next time.
    }
  }
}
