import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../paths.js";
import { percentile } from "./load.js";
import { waitFor } from "./wait.js";

/**
 * The timeline of calls at one connection (bench/one-connection.ts): bench/fixtures/timeline.cjs,
 * preloaded into a relay and its upstream, stamps request events and socket reads and writes;
 * matched call by call, they split a call's time into the relay's own stretches and the
 * upstream's. The stamps cost both sides alike, so compare stretches, not whole latencies.
 */
export const PRELOAD = join(ROOT, "bench/fixtures/timeline.cjs");

type Event = [kind: string, us: number];

/** One call, in µs: the relay's request to its upstream write, and so on to its reply's write. */
export interface Stretches {
  /** The relay: its request event to its write upstream. */
  before: number;
  /** The write upstream to the upstream's request event (the kernel, a wake-up, the upstream's HTTP parser). */
  toUpstream: number;
  /** The upstream: its request event to its reply's write. */
  upstream: number;
  /** The upstream's write to the relay's read of it. */
  back: number;
  /** The relay: its read of the upstream's reply to its own reply's write. */
  after: number;
}

export const STRETCHES: (keyof Stretches)[] = ["before", "toUpstream", "upstream", "back", "after"];

export class Timeline {
  readonly dir = mkdtempSync(join(tmpdir(), "taskgate-timeline-"));

  /** Node flags and environment for a process to be stamped. */
  launch(): { nodeArgs: string[]; env: NodeJS.ProcessEnv } {
    return { nodeArgs: ["--require", PRELOAD], env: { TIMELINE_DIR: this.dir } };
  }

  start(pids: number[]): void {
    for (const pid of pids) {
      rmSync(this.file(pid), { force: true });
      process.kill(pid, "SIGUSR1");
    }
  }

  /** Ends the recordings and reads them (each process writes its own, within five seconds). */
  async stop(pids: number[]): Promise<Event[][]> {
    for (const pid of pids) process.kill(pid, "SIGUSR2");
    await waitFor(() => pids.every((pid) => existsSync(this.file(pid))), "the timeline recordings", 5_000, 20);
    return pids.map((pid) => JSON.parse(readFileSync(this.file(pid), "utf8")) as Event[]);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private file(pid: number): string {
    return join(this.dir, `${pid}.json`);
  }
}

/**
 * The calls of one recording, matched by time (one connection: one call at a time): the relay's
 * request, its first write upstream after it, the upstream's next request event (or stdin read)
 * and reply, the relay's next read from upstream and its next write to the client. `upstream`
 * holds every upstream process's stamps in time order. A call missing a stamp
 * before the next request (a reply from another source) is left out.
 */
export function stretchesOf(relay: Event[], upstream: Event[], over: "http" | "stdio" = "http"): Stretches[] {
  // A stdio upstream's request is its read of stdin, its reply its write to stdout.
  const [request, reply] = over === "http" ? ["req", "wc"] : ["ru", "wu"];
  const requests = upstream.filter(([k]) => k === request).map(([, t]) => t);
  const replies = upstream.filter(([k]) => k === reply).map(([, t]) => t);
  const calls: Stretches[] = [];
  for (let i = 0; i < relay.length; i++) {
    if (relay[i]![0] !== "req") continue;
    const t1 = relay[i]![1];
    const next = (kind: string, from: number, after: number): [number, number] | undefined => {
      for (let j = from; j < relay.length; j++) {
        const [k, t] = relay[j]!;
        if (k === "req") return undefined;
        if (k === kind && t >= after) return [j, t];
      }
      return undefined;
    };
    const sent = next("wu", i + 1, t1);
    if (!sent) continue;
    const t3 = firstAtOrAfter(requests, sent[1]);
    const t4 = t3 === undefined ? undefined : firstAtOrAfter(replies, t3);
    if (t3 === undefined || t4 === undefined) continue;
    const read = next("ru", sent[0] + 1, t4);
    const replied = read && next("wc", read[0] + 1, read[1]);
    if (!read || !replied) continue;
    calls.push({ before: sent[1] - t1, toUpstream: t3 - sent[1], upstream: t4 - t3, back: read[1] - t4, after: replied[1] - read[1] });
  }
  return calls;
}

function firstAtOrAfter(sorted: number[], t: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
