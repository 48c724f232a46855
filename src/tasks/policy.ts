import type { Config, TaskSupport, UpstreamConfig } from "../config/schema.js";

export interface ToolPolicy {
  taskSupport: TaskSupport;
  detachAfterMs: number;
  maxDurationMs?: number;
}

/**
 * A tool's task policy: the config override, else the configured defaults. The upstream's own
 * `execution.taskSupport` says what it can do natively and does not limit taskgate (SDK 1.x
 * servers declare `forbidden` on every tool by default).
 */
export function toolPolicy(tasks: Config["tasks"], upstream: UpstreamConfig, tool: string): ToolPolicy {
  const override = Object.hasOwn(upstream.tools, tool) ? upstream.tools[tool] : undefined;
  const policy: ToolPolicy = {
    taskSupport: override?.taskSupport ?? tasks.defaultTaskSupport,
    detachAfterMs: override?.detachAfterMs ?? tasks.detachAfterMs,
  };
  if (override?.maxDurationMs !== undefined) policy.maxDurationMs = override.maxDurationMs;
  return policy;
}
