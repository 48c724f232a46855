import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest test files `npm test` names after its summary. */
const SHOWN = 10;

/**
 * Names the slowest test files after every run, so a file that grows slow is seen the day it
 * does. Time is the file's tests and hooks plus its import, as vitest measures them.
 */
export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length < 2) return;
    const timed = modules.map((m) => {
      const d = m.diagnostic();
      return { file: m.relativeModuleId, project: m.project.name, ms: d.duration + d.collectDuration + d.setupDuration };
    });
    timed.sort((a, b) => b.ms - a.ms);
    const lines = timed.slice(0, SHOWN).map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.file}${t.project ? ` (${t.project})` : ""}`);
    process.stdout.write(`\nSlowest test files:\n${lines.join("\n")}\n`);
  }
}
