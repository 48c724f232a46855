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
  /** `cpuPid`, and the measured window in µs of the monotonic clock (to slice a CPU profile by). */
  pid?: number;
  windowUs?: [number, number];
}

/** A warm-up (discarded: JIT, connection pools, caches), then the measured run. */
export async function measure(spec: LoadSpec, settings: LoadSettings): Promise<Measurement> {
  if (settings.warmupS > 0) await run(spec, settings.connections, settings.warmupS, []);
  const times: number[] = [];
  const cpuBefore = spec.cpuPid === undefined ? undefined : cpuMicros(spec.cpuPid);
  const from = monotonicUs();
  const result = await run(spec, settings.connections, settings.durationS, times);
  const to = monotonicUs();
  const cpuAfter = spec.cpuPid === undefined ? undefined : cpuMicros(spec.cpuPid);
  times.sort((a, b) => a - b);
  const failures = result.errors + result.timeouts + result.non2xx + result.mismatches;
  const good = Math.max(0, times.length - result.mismatches);
  const answered = good + failures;
  return {
    label: spec.label,
    requestsPerS: round(good / settings.durationS, 0),
    p50Ms: round(percentile(times, 0.5), 3),
    p99Ms: round(percentile(times, 0.99), 3),
    requests: good,
    failures,
    ...(cpuBefore !== undefined && cpuAfter !== undefined && answered > 0 ? { cpuUsPerRequest: round((cpuAfter - cpuBefore) / answered, 1) } : {}),
    ...(spec.cpuPid === undefined ? {} : { pid: spec.cpuPid, windowUs: [from, to] as [number, number] }),
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

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
