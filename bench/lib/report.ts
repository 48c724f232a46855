import type { LoadSettings } from "./load.js";
import type { Machine } from "./machine.js";
import type { ScenarioResult, Target } from "./result.js";

export interface BenchRun {
  startedAt: string;
  command: string;
  machine: Machine;
  load: LoadSettings;
  scenarios: ScenarioResult[];
}

/** The run as markdown: the machine and the command first, a table per scenario, then every target. */
export function renderMarkdown(run: BenchRun): string {
  const { machine, load } = run;
  const lines = [
    `Run of ${run.startedAt} on ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, redis ${machine.redis}; ${machine.pinning}.`,
    `Load: autocannon, ${load.connections} connections, ${load.warmupS} s warm-up then ${load.durationS} s measured per row. Reproduce with \`${run.command}\`.`,
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
    lines.push("| | req/s | p50 ms | p99 ms | failed |", "| --- | ---: | ---: | ---: | ---: |");
    for (const m of s.measurements) lines.push(`| ${m.label} | ${m.requestsPerS} | ${fixed(m.p50Ms)} | ${fixed(m.p99Ms)} | ${m.failures} |`);
    lines.push("");
  }
  for (const [name, value] of Object.entries(s.figures)) lines.push(`- ${name}: ${value}`);
  for (const note of s.notes) lines.push(`- note: ${note}`);
  lines.push("");
  return lines;
}

function verdict(t: Target): string {
  if (t.met === undefined) return "not measured";
  return t.met ? "met" : "**not met**";
}

function fixed(ms: number): string {
  return Number.isFinite(ms) ? ms.toFixed(2) : "-";
}
