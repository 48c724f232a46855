import { createServer } from "node:net";

/** Thrown by a check that knows waiting longer cannot help (the process it waits for has died). */
export class GiveUp extends Error {}

/** Poll `check` until it returns a truthy value or the deadline passes: every wait is bounded. */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 15_000, intervalMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      lastError = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Run `worker` over `items` with at most `limit` at once. */
export async function pool<T, R>(items: readonly T[], limit: number, worker: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await worker(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * A free port for a Redis Cluster node: at most 55535, since its cluster bus listens 10000 above
 * it, with that bus port free too, and neither clashing with the ports or bus ports of `taken`.
 */
export async function clusterNodePort(taken: ReadonlySet<number>): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = await freePort();
    const clash = [...taken].some((t) => t === port || Math.abs(t - port) === 10_000);
    if (port <= 55_535 && !clash && (await canListen(port + 10_000))) return port;
  }
  throw new Error("no free port pair for a cluster node in 50 tries");
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
