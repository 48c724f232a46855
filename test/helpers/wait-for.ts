/** Thrown by a check when waiting longer cannot help (a task ended otherwise): `waitFor` fails at once. */
export class StopWaiting extends Error {
  override name = "StopWaiting";
}

/** Poll `check` until it returns a truthy value or the deadline passes. Never a fixed sleep. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 50, what = "condition" }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      if (err instanceof StopWaiting) throw new Error(`gave up waiting for ${what}: ${err.message}`);
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
}
