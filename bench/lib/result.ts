import type { LoadSettings, Measurement } from "./load.js";
import type { Pinning } from "./procs.js";
import type { RowProfile } from "./profiles.js";
import type { BenchRedis } from "./redis.js";

export interface Target {
  name: string;
  goal: string;
  measured: string;
  /** Undefined when the scenario failed before it could tell. */
  met: boolean | undefined;
}

export interface ScenarioResult {
  id: string;
  title: string;
  measurements: Measurement[];
  figures: Record<string, string | number>;
  targets: Target[];
  notes: string[];
  error?: string;
  /** With BENCH_PROFILE=1: each profiled row's self time per request, by module. */
  profiles?: RowProfile[];
}

export interface BenchContext {
  redis: BenchRedis;
  load: LoadSettings;
  pinning: Pinning | undefined;
  /** How many in-flight tasks scenario e holds (10,000 unless overridden). */
  inFlightTasks: number;
  /** Slices in which rows measured together take turns (BENCH_ROUNDS). */
  rounds: number;
  /** The same for rows with one connection (BENCH_ROUNDS_ONE). */
  roundsOne: number;
  /** Scenario r: detached calls in all (BENCH_CLUSTER_CALLS), and how many are held at once (BENCH_CLUSTER_WAVE). */
  clusterCalls: number;
  clusterWave: number;
  /** Scenario h: calls held at each step (BENCH_HELD); scenario o: calls that end together (BENCH_BURST). */
  heldLevels: number[];
  burstCalls: number;
  /** Scenario q: long calls at once (BENCH_QUEUE_TASKS) and their length (BENCH_QUEUE_SECONDS). */
  queueTasks: number;
  queueSeconds: number;
}

export interface Scenario {
  id: string;
  title: string;
  /** Target name → goal, listed even when the scenario fails. */
  goals: Record<string, string>;
  /** Runs only when BENCH_ONLY names it (it takes minutes). */
  optIn?: boolean;
  run(ctx: BenchContext, out: ScenarioOutput): Promise<void>;
}

/** What a scenario has found so far: kept when it fails half-way, so partial figures still count. */
export class ScenarioOutput {
  readonly result: ScenarioResult;

  constructor(scenario: Scenario) {
    this.result = { id: scenario.id, title: scenario.title, measurements: [], figures: {}, targets: [], notes: [] };
    for (const [name, goal] of Object.entries(scenario.goals)) this.result.targets.push({ name, goal, measured: "not measured", met: undefined });
  }

  add(m: Measurement): Measurement {
    this.result.measurements.push(m);
    if (m.failures > 0) this.note(`${m.label}: ${m.failures} failed requests`);
    return m;
  }

  figure(name: string, value: string | number): void {
    this.result.figures[name] = value;
  }

  target(name: string, measured: string, met: boolean): void {
    const target = this.result.targets.find((t) => t.name === name);
    if (!target) throw new Error(`unknown target ${name}`);
    target.measured = measured;
    target.met = met;
  }

  note(text: string): void {
    this.result.notes.push(text);
  }

  fail(err: unknown): void {
    this.result.error = err instanceof Error ? err.message.split("\n")[0]! : String(err);
  }
}
