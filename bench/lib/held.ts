import type { Server } from "./servers.js";
import { createTask } from "./tasks.js";
import { pool, sleep } from "./wait.js";

/** upstreams[].maxInFlight's maximum (src/config/schema.ts): the most calls one shared demo process runs at once. */
export const MAX_IN_FLIGHT = 10_000;

/**
 * Enough shared demo upstreams over stdio to run `calls` at once, each at MAX_IN_FLIGHT: "demo" on
 * /mcp, then "demo-2" on /mcp-2, and so on. Calls beyond one upstream's maxInFlight would wait
 * in its queue and fail after queueTimeoutMs: they would not be held calls.
 */
export function heldUpstreams(calls: number, base: Record<string, unknown>): Record<string, unknown>[] {
  return Array.from({ length: upstreamsFor(calls) }, (_, i) => (i === 0 ? base : { ...base, name: `demo-${i + 1}`, path: `/mcp-${i + 1}` }));
}

function upstreamsFor(calls: number): number {
  return Math.max(1, Math.ceil(calls / MAX_IN_FLIGHT));
}

/** Where call `n` of `calls` goes: round-robin over heldUpstreams(calls), so each holds an equal share. */
export function upstreamUrl(gate: Server, calls: number, n: number): string {
  const i = n % upstreamsFor(calls);
  return i === 0 ? gate.url : gate.url.replace(/\/mcp$/, `/mcp-${i + 1}`);
}

const CREATE_ATTEMPTS = 8;

/**
 * Creates tasks `from` ≤ n < `to`, `concurrency` at once; `args(n)` is asked at each try, so a
 * call sent again still aims at the same end. A 503 (a store call past its deadline on a loaded
 * machine) or a dropped connection is sent again, as a client would; a task its first try made
 * anyway is left held. `retried` counts them.
 */
export async function createHeld(
  urlOf: (n: number) => string,
  from: number,
  to: number,
  args: (n: number) => Record<string, unknown>,
  concurrency: number,
): Promise<{ ids: Map<number, string>; retried: number }> {
  const ids = new Map<number, string>();
  let retried = 0;
  await pool(
    Array.from({ length: to - from }, (_, i) => from + i),
    concurrency,
    async (n) => {
      for (let attempt = 1; ; attempt++) {
        try {
          ids.set(n, await createTask(urlOf(n), "sleep", args(n), `held-${n}-${attempt}`));
          return;
        } catch (err) {
          if (attempt >= CREATE_ATTEMPTS || !/answered 503|fetch failed/.test(String((err as Error).message))) throw err;
          retried++;
          await sleep(250 * attempt);
        }
      }
    },
  );
  return { ids, retried };
}
