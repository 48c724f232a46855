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
  /** Scenario h (opt-in): BENCH_HELD, the calls held at each step, rising, e.g. "300,3000,30000". */
  heldLevels: number[];
  /** Scenario o (opt-in): BENCH_BURST detached calls that all end in the same second. */
  burstCalls: number;
  /** Scenario q (opt-in): BENCH_QUEUE_TASKS long calls of BENCH_QUEUE_SECONDS each, at once. */
  queueTasks: number;
  queueSeconds: number;
  /** BENCH_ROUNDS: a taskgate row and its floor take turns in this many slices of the measured time. */
  rounds: number;
  /** BENCH_ROUNDS_ONE: the same for rows with one connection, whose p50 drifts by more than the differences sought. */
  roundsOne: number;
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
  BENCH_ROUNDS_ONE: 12,
  BENCH_CLUSTER_CALLS: 100_000,
  BENCH_CLUSTER_WAVE: 30_000,
  BENCH_BURST: 10_000,
  BENCH_QUEUE_TASKS: 500,
  BENCH_QUEUE_SECONDS: 20,
} as const;
const DEFAULT_HELD = "300,3000,30000";

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
  const roundsOne = Math.round(num("BENCH_ROUNDS_ONE", 1, 60));
  const clusterCalls = Math.round(num("BENCH_CLUSTER_CALLS", 1, 1_000_000));
  const clusterWave = Math.round(num("BENCH_CLUSTER_WAVE", 1, 100_000));
  const burstCalls = Math.round(num("BENCH_BURST", 1, 100_000));
  const queueTasks = Math.round(num("BENCH_QUEUE_TASKS", 1, 10_000));
  const queueSeconds = num("BENCH_QUEUE_SECONDS", 0.1, 600);
  const heldLevels = readLevels(env.BENCH_HELD || DEFAULT_HELD);
  if (env.BENCH_HELD && env.BENCH_HELD !== DEFAULT_HELD) changed.push(`BENCH_HELD=${env.BENCH_HELD}`);
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
  return {
    load,
    inFlightTasks,
    clusterCalls,
    clusterWave,
    heldLevels,
    burstCalls,
    queueTasks,
    queueSeconds,
    rounds,
    roundsOne,
    only,
    profile,
    logLevel,
    command: [...changed, "npm run bench"].join(" "),
  };
}

function readLevels(raw: string): number[] {
  const levels = raw.split(",").map((s) => Number(s.trim()));
  const rising = levels.every((n, i) => Number.isInteger(n) && n >= 1 && n <= 100_000 && (i === 0 || n > levels[i - 1]!));
  if (!rising) throw new Error(`BENCH_HELD must be rising whole numbers in [1, 100000] separated by commas, got "${raw}"`);
  return levels;
}
