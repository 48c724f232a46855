import { StoreUnavailableError } from "../store/contract.js";
import { backoffDelayMs } from "../util/backoff.js";

/**
 * Run a store write the owner must not drop (a call's outcome, an upstream question), trying
 * again while the store is unavailable and `keepGoing()` holds — for the owner, while its lease
 * can still be valid. Other errors are thrown at once. Undefined when it gave up.
 */
export async function retryWhileUnavailable<T>(op: () => Promise<T>, keepGoing: () => boolean): Promise<T | undefined> {
  for (let attempt = 1; keepGoing(); attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt, 50, 1_000)));
  }
  return undefined;
}
