/**
 * An abortable sleep that reports how far it got. The demo's slow tools are built on it, so that
 * cancellation really stops the work (the gateway relies on that to free the upstream).
 */
export interface PauseOptions {
  seconds: number;
  intervalMs: number;
  signal: AbortSignal;
  onTick(elapsedSeconds: number): Promise<void> | void;
}

export async function pauseWithProgress({ seconds, intervalMs, signal, onTick }: PauseOptions): Promise<void> {
  const totalMs = seconds * 1000;
  // Progress is told in the steps slept ("Slept 1/2.5 s"); the end waits on the monotonic clock
  // too, since a timer may fire a little before its time by it, and a wall clock can be stepped.
  const startedAt = performance.now();
  let sleptMs = 0;
  while (sleptMs < totalMs) {
    const stepMs = Math.min(intervalMs, totalMs - sleptMs);
    await delay(stepMs, signal);
    sleptMs += stepMs;
    if (sleptMs < totalMs) await onTick(sleptMs / 1000);
  }
  const shortMs = totalMs - (performance.now() - startedAt);
  if (shortMs > 0) await delay(Math.ceil(shortMs), signal);
  // The last tick says the work is all done ("Slept 2/2 s"), as a real tool's last progress
  // would; it goes out before the result, on the same stream. A client that reads both at once may
  // drop it (the SDK 1.x client handles notifications a microtask after responses); a task keeps
  // it as its final statusMessage.
  if (seconds > 0) await onTick(seconds);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Never settles on its own: only the signal ends it. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    signal.addEventListener("abort", () => reject(abortReason(signal)), { once: true });
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(`cancelled: ${String(signal.reason)}`);
}

/** "2" for whole seconds, "1.5" otherwise: progress messages stay short. */
export function formatSeconds(seconds: number): string {
  return String(Math.round(seconds * 10) / 10);
}
