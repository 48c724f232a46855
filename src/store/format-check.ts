import type { Logger } from "pino";
import { type FormatClaim, type FormatRecord, formatRefusal, StoreFormatError, type StoreFormatRecorder } from "./format.js";

/** Format 1 tasks counted at most, for the message. */
const COUNT_AT_MOST = 100;

/**
 * At start, before any task is made: record this build's format in the store, or refuse to start
 * (StoreFormatError) when the store is in a format it cannot work beside, naming both.
 */
export async function checkStoreFormat(recorder: StoreFormatRecorder, claim: FormatClaim): Promise<FormatRecord> {
  if ((await recorder.read()) === undefined) {
    const left = await recorder.unrecordedTasks(COUNT_AT_MOST);
    if (left > 0)
      throw new StoreFormatError(
        `the store (${recorder.where}) holds ${left >= COUNT_AT_MOST ? `${COUNT_AT_MOST} or more` : left} running task${left === 1 ? "" : "s"} of store format 1 ` +
          `(taskgate built before the lease per replica), which cannot run beside this replica (taskgate ${claim.version}, format ${claim.format}): ` +
          "neither version's reaper would see the other's tasks. Replace every replica at once (stop the older ones first), " +
          "or wait until their tasks ended (docs/operations/upgrading.md#from-format-1)",
      );
  }
  const stored = await recorder.record(claim);
  const refusal = formatRefusal(stored, claim);
  if (refusal) throw new StoreFormatError(refusal);
  return stored;
}

/**
 * While serving: the store's format read again every `intervalMs`. Once a newer replica raised it
 * past what this one works beside, this replica stops taking calls (`refusal` says why; /readyz
 * and new tasks answer with it) and says so in its log; a store that cannot be read changes nothing.
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
    const stored = await this.recorder.read().catch(() => undefined);
    if (!stored) return;
    const refusal = formatRefusal(stored, this.claim);
    if (refusal && refusal !== this.refusal) this.logger.error({ storeFormat: stored, replicaFormat: this.claim }, `refusing calls: ${refusal}`);
    this.refusal = refusal;
  }
}
