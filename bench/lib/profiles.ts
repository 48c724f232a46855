import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../paths.js";
import { readCpuProfile, sliceProfile, type ProfileSlice } from "./cpu-profile.js";
import { round, type Measurement } from "./load.js";

/**
 * BENCH_PROFILE=1: taskgate and the bench's fixtures (floors, hono baseline) run under
 * `node --cpu-prof`, one directory per scenario under bench/results/profiles/ (git-ignored). After
 * the scenario, each measured row's window is cut out of its process's profile: self time per
 * module and per function, divided by the requests answered, i.e. where the row's µs per request go.
 */
let root: string | undefined;
let current: string | undefined;

export function enableProfiles(dir: string): void {
  root = dir;
}

/** Start profiling the processes a scenario starts from now on; the directory, when enabled. */
export function profileScenario(id: string): string | undefined {
  current = root ? join(root, id) : undefined;
  if (current) mkdirSync(current, { recursive: true });
  return current;
}

/** Node flags for a process to be profiled; none unless BENCH_PROFILE is set. */
export function profileArgs(): string[] {
  return current ? ["--cpu-prof", `--cpu-prof-dir=${current}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`] : [];
}

/**
 * One measured row's share of a profile. The sampler runs on wall time: on a loaded machine a
 * descheduled thread's waits are counted against whatever it was running, so the profile's µs
 * exceed the CPU time. Its shares hold; each module's µs per request is its share of the busy
 * samples times the CPU-µs per request read from /proc.
 */
export interface RowProfile {
  row: string;
  file: string;
  requests: number;
  cpuUsPerRequest?: number;
  /** Main-thread time sampled as busy (not idle), per request: wall time, see above. */
  busyUsPerRequest: number;
  modules: { module: string; share: number; usPerRequest?: number }[];
}

const TOP_FUNCTIONS = 25;
const SAMPLE_INTERVAL_US = 250;
/** Modules below this share of the busy samples are summed in one line. */
const MIN_MODULE_SHARE = 0.01;

/** Cut every profiled row out of the profiles in `dir`; the full top-25 lists go to `dir`/summary.md. */
export function summarizeProfiles(dir: string, measurements: readonly Measurement[]): RowProfile[] {
  const rows: RowProfile[] = [];
  const lines = ["# Self time per request, by module and by function", ""];
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
    // node names its profiles CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile.
    const pid = Number(name.split(".")[3]);
    const measured = measurements.filter((m) => m.pid === pid && m.windowsUs);
    if (!measured.length) continue;
    const profile = readCpuProfile(join(dir, name));
    for (const m of measured) {
      const slice = sliceProfile(profile, ROOT, m.windowsUs);
      const answered = Math.max(1, m.requests + m.failures);
      const row = rowProfile(m, relative(ROOT, join(dir, name)), slice, answered);
      rows.push(row);
      lines.push(...topFunctions(row, slice));
    }
  }
  writeFileSync(join(dir, "summary.md"), `${lines.join("\n")}\n`);
  return rows;
}

function rowProfile(m: Measurement, file: string, slice: ProfileSlice, answered: number): RowProfile {
  return {
    row: m.label,
    file,
    requests: answered,
    ...(m.cpuUsPerRequest === undefined ? {} : { cpuUsPerRequest: m.cpuUsPerRequest }),
    busyUsPerRequest: round(slice.busyUs / answered, 1),
    modules: slice.modules.map((x) => {
      const share = slice.busyUs > 0 ? x.selfUs / slice.busyUs : 0;
      return { module: x.module, share: round(share, 4), ...(m.cpuUsPerRequest === undefined ? {} : { usPerRequest: round(share * m.cpuUsPerRequest, 1) }) };
    }),
  };
}

function topFunctions(row: RowProfile, slice: ProfileSlice): string[] {
  // µs per request: the share of busy samples times the CPU-µs per request from /proc.
  const cpu = row.cpuUsPerRequest;
  const us = (selfUs: number) => (cpu === undefined || slice.busyUs <= 0 ? "-" : String(round((selfUs / slice.busyUs) * cpu, 2)));
  const modules = new Map(slice.modules.map((m) => [m.module, m.selfUs]));
  const top = slice.functions.slice(0, TOP_FUNCTIONS);
  const shown = slice.modules.filter((m) => m.selfUs >= slice.busyUs * MIN_MODULE_SHARE);
  const restUs = slice.busyUs - shown.reduce((sum, m) => sum + m.selfUs, 0);
  // Grouped by module, the module with the most self time first.
  top.sort((a, b) => modules.get(b.module)! - modules.get(a.module)! || b.selfUs - a.selfUs);
  return [
    `## ${row.row}`,
    "",
    `${row.requests} requests; ${cpu ?? "?"} CPU-µs per request from /proc (all threads); main thread sampled busy ${row.busyUsPerRequest} µs per request (wall time: more than the CPU time when the machine is loaded). Profile: ${row.file}`,
    "",
    "| module | share of busy | ≈ CPU-µs / req |",
    "| --- | ---: | ---: |",
    ...shown.map((x) => `| ${x.module} | ${percent(x.selfUs, slice.busyUs)} | ${us(x.selfUs)} |`),
    `| ${slice.modules.length - shown.length} more modules | ${percent(restUs, slice.busyUs)} | ${us(restUs)} |`,
    "",
    `Top ${TOP_FUNCTIONS} functions by self time, grouped by module:`,
    "",
    "| module | function | where | share of busy | ≈ CPU-µs / req |",
    "| --- | --- | --- | ---: | ---: |",
    ...top.map((f) => `| ${f.module} | \`${f.fn}\` | ${f.where} | ${percent(f.selfUs, slice.busyUs)} | ${us(f.selfUs)} |`),
    "",
  ];
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${round((100 * part) / whole, 1)} %` : "-";
}
