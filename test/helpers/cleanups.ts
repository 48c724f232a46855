import { afterEach } from "vitest";

/** Anything a test opens: a store or connector (close), a process or server (stop). */
export type Closable = { close(): Promise<unknown> } | { stop(): Promise<unknown> };

export interface Cleanups {
  /** Run `fns` after the current test, last registered first, whether it passed or not. */
  defer(...fns: Array<() => unknown>): void;
  /** Close or stop `thing` after the current test; returns it, so `track(await open())` reads as one step. */
  track<T extends Closable>(thing: T): T;
}

/**
 * One place for what every test that opens things needs: they are closed after each test, in
 * reverse order of opening (a store before the Redis under it). Call inside a `describe` or at the
 * top of a file.
 */
export function useCleanups(): Cleanups {
  const pending: Array<() => unknown> = [];
  afterEach(async () => {
    for (const fn of pending.splice(0).reverse()) await fn();
  });
  return {
    defer: (...fns) => void pending.push(...fns),
    track: (thing) => {
      pending.push(() => ("close" in thing ? thing.close() : thing.stop()));
      return thing;
    },
  };
}
