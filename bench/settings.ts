import type { LoadSettings } from "./lib/load.js";

/**
 * The run's knobs, from BENCH_* variables so a quick run needs no code change. The defaults are
 * what the figures in docs/ used; the command printed with the results names any that differ.
 */
export interface Settings {
  load: LoadSettings;
  inFlightTasks: number;
  /** Scenario r (opt-in): BENCH_CLUSTER_CALLS detached calls in all, in waves of BENCH_CLUSTER_WAVE held at once. */
  clusterCalls: number;
  clusterWave: number;
  /** BENCH_ROUNDS: a taskgate row and its floor take turns in this many slices of the measured time. */
  rounds: number;
  /** Scenario ids to run, e.g. "a,d"; all when empty. */
  only: string[];
  /** BENCH_PROFILE=1: taskgate and the fixtures run under `node --cpu-prof` (see lib/profiles.ts). */
  profile: boolean;
  /**
   * BENCH_LOG_LEVEL: taskgate's log level. Default info, taskgate's own default (at info and below a
   * request's log context follows it through AsyncLocalStorage); warn shows what that costs.
   */
  logLevel: string;
  command: string;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const DEFAULTS = {
  BENCH_CONNECTIONS: 10,
  BENCH_WARMUP_S: 2,
  BENCH_DURATION_S: 6,
  BENCH_TASKS: 10_000,
  BENCH_ROUNDS: 3,
  BENCH_CLUSTER_CALLS: 100_000,
  BENCH_CLUSTER_WAVE: 30_000,
} as const;

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const changed: string[] = [];
  const num = (name: keyof typeof DEFAULTS, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return DEFAULTS[name];
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number in [${min}, ${max}], got "${raw}"`);
    changed.push(`${name}=${raw}`);
    return value;
  };
  const load = { connections: num("BENCH_CONNECTIONS", 1, 1000), warmupS: num("BENCH_WARMUP_S", 0, 60), durationS: num("BENCH_DURATION_S", 1, 60) };
  const inFlightTasks = Math.round(num("BENCH_TASKS", 1, 100_000));
  const rounds = Math.round(num("BENCH_ROUNDS", 1, 20));
  const clusterCalls = Math.round(num("BENCH_CLUSTER_CALLS", 1, 1_000_000));
  const clusterWave = Math.round(num("BENCH_CLUSTER_WAVE", 1, 100_000));
  const only = (env.BENCH_ONLY ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (only.length) changed.push(`BENCH_ONLY=${only.join(",")}`);
  const profile = env.BENCH_PROFILE === "1";
  if (profile) changed.push("BENCH_PROFILE=1");
  const logLevel = env.BENCH_LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`BENCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  if (logLevel !== "info") changed.push(`BENCH_LOG_LEVEL=${logLevel}`);
  return { load, inFlightTasks, clusterCalls, clusterWave, rounds, only, profile, logLevel, command: [...changed, "npm run bench"].join(" ") };
}
