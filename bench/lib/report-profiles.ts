import { round } from "./load.js";
import type { RowProfile } from "./profiles.js";

const MODULES_SHOWN = 14;

/**
 * The profiled rows of a scenario side by side: µs per request by module (self time on the main
 * thread), so a taskgate row reads against its floor module by module. The per-function lists
 * are in the summary.md beside the profiles.
 */
export function profileTable(profiles: readonly RowProfile[]): string[] {
  if (!profiles.length) return [];
  const worst = new Map<string, number>();
  for (const p of profiles) for (const m of p.modules) worst.set(m.module, Math.max(worst.get(m.module) ?? 0, m.share));
  const shown = [...worst]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MODULES_SHOWN)
    .map(([name]) => name);
  const show = (share: number, cpu: number | undefined) => `${cpu === undefined ? "" : `${round(share * cpu, 1)} `}(${round(share * 100, 1)} %)`;
  const cell = (p: RowProfile, name: string) => show(p.modules.find((m) => m.module === name)?.share ?? 0, p.cpuUsPerRequest);
  const rest = (p: RowProfile) =>
    show(
      p.modules.filter((m) => !shown.includes(m.module)).reduce((sum, m) => sum + m.share, 0),
      p.cpuUsPerRequest,
    );
  const files = [...new Set(profiles.map((p) => p.file.split("/").slice(0, -1).join("/")))];
  return [
    `CPU profile (\`node --cpu-prof\`) of each row's measured window: self time by module as CPU-µs per request (the module's share of the main thread's busy samples times the row's CPU-µs per request) and the share itself; the top functions are in ${files.map((f) => `${f}/summary.md`).join(", ")}.`,
    "",
    `| module | ${profiles.map((p) => p.row).join(" | ")} |`,
    `| --- | ${profiles.map(() => "---:").join(" | ")} |`,
    ...shown.map((name) => `| ${name} | ${profiles.map((p) => cell(p, name)).join(" | ")} |`),
    `| everything else | ${profiles.map(rest).join(" | ")} |`,
    `| **CPU-µs / req (/proc)** | ${profiles.map((p) => p.cpuUsPerRequest ?? "-").join(" | ")} |`,
    `| main thread sampled busy, wall µs / req | ${profiles.map((p) => p.busyUsPerRequest).join(" | ")} |`,
    "",
  ];
}
