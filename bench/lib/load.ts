import type { EventEmitter } from "node:events";
import autocannon from "autocannon";
import { cpuMicros } from "./cpu.js";
import { isGoodReply, type WireRequest } from "./mcp.js";

export interface LoadSpec {
  label: string;
  url: string;
  method?: "GET" | "POST";
  request?: WireRequest;
  /** Whether a reply body is a success; default: a JSON-RPC result. */
  verify?: (body: string) => boolean;
  /** The server process whose CPU time per request is reported (taskgate, or a floor). */
  cpuPid?: number;
  /** Called before each measured slice of this row; what it returns is called after it (counters around the row's own traffic). */
  around?: () => Promise<() => Promise<void>>;
}

export interface LoadSettings {
  connections: number;
  warmupS: number;
  durationS: number;
}

export interface Measurement {
  label: string;
  requestsPerS: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Connection errors, timeouts, non-2xx answers and bodies that were not a success. */
  failures: number;
  /** CPU-µs of `cpuPid` (its own process, not its children) per request answered in the measured window. */
  cpuUsPerRequest?: number;
  /** Set on a taskgate row held against a floor of the same run: its label and the ratios. */
  floor?: { label: string; throughput: number; cpu?: number };
  /** `cpuPid`, and the measured windows in µs of the monotonic clock (to slice a CPU profile by). */
  pid?: number;
  windowsUs?: [number, number][];
}

/** A warm-up (discarded: JIT, connection pools, caches), then the measured run. */
export async function measure(spec: LoadSpec, settings: LoadSettings): Promise<Measurement> {
  return (await measureTogether([spec], settings, 1))[0]!;
}

interface Tally {
  times: number[];
  failures: number;
  mismatches: number;
  cpuUs: number | undefined;
  windows: [number, number][];
}

/**
 * Rows measured in turns: each warms up, then the measured time is cut into `rounds` slices and
 * the rows take turns slice by slice, so load that drifts on a shared machine falls on each alike
 * and their ratios (taskgate against its floor) compare like with like. One round: one after the other.
 */
export async function measureTogether(specs: readonly LoadSpec[], settings: LoadSettings, rounds: number): Promise<Measurement[]> {
  for (const spec of specs) if (settings.warmupS > 0) await run(spec, settings.connections, settings.warmupS, []);
  const tallies: Tally[] = specs.map(() => ({ times: [], failures: 0, mismatches: 0, cpuUs: 0, windows: [] }));
  const sliceS = settings.durationS / Math.max(1, rounds);
  for (let r = 0; r < Math.max(1, rounds); r++) {
    for (const [i, spec] of specs.entries()) await slice(spec, settings.connections, sliceS, tallies[i]!);
  }
  return specs.map((spec, i) => summarize(spec, tallies[i]!, settings.durationS));
}

async function slice(spec: LoadSpec, connections: number, durationS: number, tally: Tally): Promise<void> {
  const after = await spec.around?.();
  const cpuBefore = spec.cpuPid === undefined ? undefined : cpuMicros(spec.cpuPid);
  const from = monotonicUs();
  const result = await run(spec, connections, durationS, tally.times);
  const to = monotonicUs();
  const cpuAfter = spec.cpuPid === undefined ? undefined : cpuMicros(spec.cpuPid);
  await after?.();
  tally.failures += result.errors + result.timeouts + result.non2xx + result.mismatches;
  tally.mismatches += result.mismatches;
  tally.cpuUs = cpuBefore === undefined || cpuAfter === undefined || tally.cpuUs === undefined ? undefined : tally.cpuUs + cpuAfter - cpuBefore;
  tally.windows.push([from, to]);
}

function summarize(spec: LoadSpec, tally: Tally, durationS: number): Measurement {
  const { times, failures } = tally;
  times.sort((a, b) => a - b);
  const good = Math.max(0, times.length - tally.mismatches);
  const answered = good + failures;
  return {
    label: spec.label,
    requestsPerS: round(good / durationS, 0),
    p50Ms: round(percentile(times, 0.5), 3),
    p99Ms: round(percentile(times, 0.99), 3),
    requests: good,
    failures,
    ...(spec.cpuPid !== undefined && tally.cpuUs !== undefined && answered > 0 ? { cpuUsPerRequest: round(tally.cpuUs / answered, 1) } : {}),
    ...(spec.cpuPid === undefined ? {} : { pid: spec.cpuPid, windowsUs: tally.windows }),
  };
}

/** The clock `node --cpu-prof` stamps its samples with (CLOCK_MONOTONIC), in µs. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Every response time is kept at full resolution: autocannon's own histogram counts whole milliseconds. */
async function run(spec: LoadSpec, connections: number, durationS: number, times: number[]): Promise<autocannon.Result> {
  const instance = autocannon({
    url: spec.url,
    method: spec.method ?? "POST",
    connections,
    duration: durationS,
    // autocannon stops at its first sample tick after the duration: a tick each slice keeps a slice under 1 s to its length.
    sampleInt: Math.min(1000, durationS * 1000),
    timeout: 10,
    ...(spec.request ? { headers: spec.request.headers, body: spec.request.body, idReplacement: true } : {}),
    verifyBody: (body) => (spec.verify ?? isGoodReply)(String(body)),
  });
  // The emitted arguments are (client, status, bytes, ms); the published typings omit the client.
  const cap = 5_000_000;
  (instance as unknown as EventEmitter).on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300 && times.length < cap) times.push(ms);
  });
  return instance;
}

/** The value at quantile `q` of sorted values (the upper middle for the median of an even count); NaN for none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
