import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * CPU time of one process (user + system, its own threads, not its children), from
 * /proc/<pid>/stat. Per request it holds still when neighbours load the machine, unlike req/s:
 * a busy core slows a server down but does not make it do more work per request.
 */
let ticksPerS: number | undefined;

function clockTicks(): number {
  if (ticksPerS === undefined) {
    try {
      ticksPerS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerS = 100;
    }
  }
  return ticksPerS;
}

/** CPU microseconds a process has used so far; undefined when it cannot be read (no /proc). */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may itself hold spaces and parentheses.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(rest[11]) + Number(rest[12]); // utime, stime (fields 14 and 15)
    return Number.isFinite(ticks) ? (ticks * 1_000_000) / clockTicks() : undefined;
  } catch {
    return undefined;
  }
}
