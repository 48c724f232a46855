import type { LoadSettings, Measurement } from "./load.js";
import type { Machine } from "./machine.js";
import { profileTable } from "./report-profiles.js";
import type { ScenarioResult, Target } from "./result.js";

export interface BenchRun {
  startedAt: string;
  command: string;
  /** taskgate's log level in this run (BENCH_LOG_LEVEL). */
  logLevel: string;
  rounds: number;
  roundsOne: number;
  machine: Machine;
  load: LoadSettings;
  scenarios: ScenarioResult[];
}

/** The run as markdown: the machine and the command first, a table per scenario, then every target. */
export function renderMarkdown(run: BenchRun): string {
  const { machine, load } = run;
  const lines = [
    `Run of ${run.startedAt} on ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, redis ${machine.redis}; ${machine.pinning}.`,
    `Load: autocannon, ${load.connections} connections, ${load.warmupS} s warm-up then ${load.durationS} s measured per row; a taskgate row and its floor take turns in ${run.rounds} slices of that time (${run.roundsOne} with one connection). Reproduce with \`${run.command}\`.`,
    `taskgate runs with its default configuration (metrics on, auth none, stdio isolation: pool) at log level ${run.logLevel}.`,
    `Load average at the start: ${machine.loadAverage.join(", ")} (1, 5, 15 min); req/s moves with it, CPU-µs per request much less.`,
    "CPU-µs / req: the server process's own CPU time (user + system from /proc/<pid>/stat, its children not included) over the measured window, per request answered. Rows labelled `floor:` are minimal relays on taskgate's stack doing only the unavoidable work (bench/fixtures/floor-*.ts); a taskgate row's \"vs floor\" is its req/s as a share of the floor's and its CPU per request as a multiple of the floor's.",
    "",
  ];
  for (const s of run.scenarios) lines.push(...scenarioSection(s));
  lines.push("#### Targets", "", "| target | goal | measured | |", "| --- | --- | --- | --- |");
  for (const s of run.scenarios) for (const t of s.targets) lines.push(`| ${s.id}. ${t.name} | ${t.goal} | ${t.measured} | ${verdict(t)} |`);
  return `${lines.join("\n")}\n`;
}

function scenarioSection(s: ScenarioResult): string[] {
  const lines = [`#### ${s.id}. ${s.title}`, ""];
  if (s.error) lines.push(`error: ${s.error}`, "");
  if (s.measurements.length) {
    lines.push("| | req/s | p50 ms | p99 ms | failed | CPU-µs / req | vs floor: req/s, CPU |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const m of s.measurements)
      lines.push(`| ${m.label} | ${m.requestsPerS} | ${fixed(m.p50Ms)} | ${fixed(m.p99Ms)} | ${m.failures} | ${m.cpuUsPerRequest ?? "-"} | ${vsFloor(m)} |`);
    lines.push("");
  }
  for (const [name, value] of Object.entries(s.figures)) lines.push(`- ${name}: ${value}`);
  for (const note of s.notes) lines.push(`- note: ${note}`);
  lines.push("");
  if (s.profiles) lines.push(...profileTable(s.profiles));
  return lines;
}

/** "0.34×, 2.9× CPU": throughput as a share of the floor's, CPU per request as a multiple of it. */
function vsFloor(m: Measurement): string {
  if (!m.floor) return "";
  return `${m.floor.throughput.toFixed(2)}×${m.floor.cpu === undefined ? "" : `, ${m.floor.cpu.toFixed(2)}× CPU`}`;
}

function verdict(t: Target): string {
  if (t.met === undefined) return "not measured";
  return t.met ? "met" : "**not met**";
}

function fixed(ms: number): string {
  return Number.isFinite(ms) ? ms.toFixed(2) : "-";
}
