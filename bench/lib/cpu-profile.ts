import { readFileSync } from "node:fs";

/**
 * Self time from a V8 `.cpuprofile` (what `node --cpu-prof` writes): per function and per module,
 * over the whole profile or over one time window. The profile's timestamps are microseconds of the
 * system's monotonic clock, the same clock as `process.hrtime()` in the bench, so a window
 * recorded by the bench around one measured row selects that row's samples.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionCost {
  fn: string;
  /** Path relative to the repository (or node:…), with its 1-based line. */
  where: string;
  module: string;
  selfUs: number;
}

export interface ProfileSlice {
  sampledUs: number;
  /** Sampled time the main thread was running JavaScript, the collector or V8 (idle left out). */
  busyUs: number;
  modules: { module: string; selfUs: number }[];
  functions: FunctionCost[];
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
}

/** Self time per function and module of the samples taken inside `windows` ([from, to) each, µs); all when none. */
export function sliceProfile(profile: CpuProfile, root: string, windows: readonly [number, number][] = [[-Infinity, Infinity]]): ProfileSlice {
  const inside = (at: number) => windows.some(([from, to]) => at >= from && at < to);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfById = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (!inside(at)) continue;
    // A sample stands for the time until the next one.
    const dt = Math.max(0, profile.timeDeltas[i + 1] ?? 0);
    selfById.set(profile.samples[i]!, (selfById.get(profile.samples[i]!) ?? 0) + dt);
  }
  const functions = new Map<string, FunctionCost>();
  let sampledUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfById) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    sampledUs += us;
    if (frame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const where = frame.url ? `${shortUrl(frame.url, root)}:${frame.lineNumber + 1}` : "";
    const fn = frame.functionName || "(anonymous)";
    const key = `${fn} ${where}`;
    const cost = functions.get(key) ?? { fn, where, module: moduleOf(frame.url, frame.functionName, root), selfUs: 0 };
    cost.selfUs += us;
    functions.set(key, cost);
  }
  const modules = new Map<string, number>();
  for (const f of functions.values()) modules.set(f.module, (modules.get(f.module) ?? 0) + f.selfUs);
  return {
    sampledUs,
    busyUs: sampledUs - idleUs,
    modules: [...modules].map(([module, selfUs]) => ({ module, selfUs })).sort((a, b) => b.selfUs - a.selfUs),
    functions: [...functions.values()].sort((a, b) => b.selfUs - a.selfUs),
  };
}

function shortUrl(url: string, root: string): string {
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  const modules = path.lastIndexOf("/node_modules/");
  if (modules >= 0) return path.slice(modules + 1);
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

/**
 * The module a function belongs to: a package under node_modules, a directory of taskgate's
 * build (`taskgate dist/http`), a bench fixture, a part of Node's library, or V8 itself.
 */
export function moduleOf(url: string, functionName: string, root: string): string {
  if (!url) {
    if (functionName === "(garbage collector)") return "(garbage collector)";
    if (functionName === "(program)") return "(program: V8, native code)";
    return "(V8 builtins, native)";
  }
  const path = shortUrl(url, root);
  if (path.startsWith("node:")) return path.split("/").slice(0, 2).join("/");
  if (path.startsWith("node_modules/")) {
    const parts = path.split("/");
    return parts[1]!.startsWith("@") ? `${parts[1]}/${parts[2]}` : parts[1]!;
  }
  if (path.startsWith("dist/")) {
    // Two directory levels: `dist/upstream/mux`, `dist/http`, or the file itself.
    const parts = path.split("/");
    return `taskgate ${parts.length === 2 ? path : parts.slice(0, Math.min(parts.length - 1, 3)).join("/")}`;
  }
  if (path.startsWith("dist-bench/")) return "bench fixture";
  return path;
}
