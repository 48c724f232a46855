import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  redis: string;
  pinning: string;
  /** 1, 5 and 15 minute load averages when the run started: the machine may be shared. */
  loadAverage: number[];
}

/** What the figures were measured on: they compare only within one run on one machine. */
export function describeMachine(redisVersion: string, pinning: string): Machine {
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    node: process.version,
    redis: redisVersion,
    pinning,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    return line?.split(":")[1]?.trim() ?? "unknown";
  } catch {
    return cpus()[0]?.model ?? "unknown";
  }
}
