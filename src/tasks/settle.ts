import { taskChannel, type Store, type TaskRecord } from "../store/contract.js";

/** Between reads when no hint arrives: a lost hint only delays (pub/sub is a hint, design: State). */
const POLL_MS = 2_000;

export interface SettleOptions {
  /** When `decide` is told it is late; undefined: never. */
  deadline?: number;
  clock: () => number;
  signal?: AbortSignal;
}

/**
 * Re-read a task until `decide` settles on an answer: woken by the task's hints from any replica,
 * at the deadline, or by the slow poll. `decide` sees undefined once the task is gone (expired),
 * so the loop always ends by the task's TTL at the latest. Undefined only when aborted.
 */
export async function settle<T>(
  store: Store,
  taskId: string,
  principal: string,
  decide: (task: TaskRecord | undefined, late: boolean) => Promise<T | undefined> | T | undefined,
  { deadline, clock, signal }: SettleOptions,
): Promise<T | undefined> {
  let dirty = false;
  let wake: () => void = () => undefined;
  const unsubscribe = await store.bus.subscribe(taskChannel(taskId), () => {
    dirty = true;
    wake();
  });
  const onAbort = () => wake();
  signal?.addEventListener("abort", onAbort);
  try {
    while (!signal?.aborted) {
      dirty = false;
      const task = await store.getTask(taskId, principal);
      const answer = await decide(task, deadline !== undefined && clock() >= deadline);
      if (answer !== undefined) return answer;
      if (dirty) continue;
      // Before the deadline, wake at it; after it (decide declined to act), only a hint or the poll.
      const left = deadline === undefined ? POLL_MS : deadline - clock();
      const waitMs = left > 0 ? Math.min(POLL_MS, left) : POLL_MS;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, waitMs).unref();
      });
    }
    return undefined;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await unsubscribe();
  }
}
