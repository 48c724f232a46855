import { round, type Measurement } from "../lib/load.js";

/** Ratios and added latency between two rows of the same run. */
export function ratio(a: Measurement, b: Measurement): number {
  return round(a.requestsPerS / b.requestsPerS, 2);
}

export function addedMs(a: Measurement, b: Measurement, key: "p50Ms" | "p99Ms"): number {
  return round(a[key] - b[key], 2);
}

export function times(value: number): string {
  return `${value.toFixed(2)}×`;
}

/** A difference in ms to the µs, with its sign: "+0.042", "-0.013". */
export function signedMs(ms: number): string {
  return `${ms >= 0 ? "+" : ""}${ms.toFixed(3)}`;
}
