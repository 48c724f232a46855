import { setFlagsFromString } from "node:v8";

/**
 * `memory.heapGrowthPercent`: V8 reads its heap-growing factor each time it sets the next limit
 * after a full collection, so setting the flag at start takes effect for the whole process. 0
 * leaves V8's own heuristic, which lets the old generation grow up to four times the live data
 * between collections: right for short bursts, but a gateway holding 10,000 calls keeps what a
 * burst of creates made it commit (issue 16).
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
