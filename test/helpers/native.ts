import type { RunningProcess } from "./processes.js";
import { waitFor } from "./wait-for.js";

/** The task-native demo server's own log lines (stderr): what happened to its tasks, seen from the upstream's side. */
export function nativeLog(demo: RunningProcess, what: "started" | "completed" | "saw its cancel", tool?: string): string[] {
  const line = what === "started" ? new RegExp(`native task (\\S+) started ${tool ?? "\\S+"}`, "g") : new RegExp(`native task (\\S+) ${what}`, "g");
  return [...demo.output().matchAll(line)].map((m) => m[1]!);
}

/** Wait until the demo server logged `what` for one more task than `before` had. */
export function nextLogged(demo: RunningProcess, what: "started" | "completed" | "saw its cancel", before: string[], tool?: string): Promise<string> {
  return waitFor(() => nativeLog(demo, what, tool).find((id) => !before.includes(id)), { timeoutMs: 15_000, what: `the demo server to log "${what}"` });
}
