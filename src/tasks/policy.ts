import type { Config, TaskSupport, UnawareClients, UpstreamConfig } from "../config/schema.js";

export interface ToolPolicy {
  taskSupport: TaskSupport;
  detachAfterMs: number;
  maxDurationMs?: number;
  /** What a caller that declared no task support gets (issue 20): the tool's, else the upstream's, else tasks.unawareClients. */
  unawareClients: UnawareClients;
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
    unawareClients: override?.unawareClients ?? upstream.unawareClients ?? tasks.unawareClients,
  };
  if (override?.maxDurationMs !== undefined) policy.maxDurationMs = override.maxDurationMs;
  return policy;
}

/** Whether any tool of the upstream may be handled for task-unaware callers: then tools/list shows them the gateway tools. */
export function handlesUnaware(tasks: Config["tasks"], upstream: UpstreamConfig): boolean {
  if ((upstream.unawareClients ?? tasks.unawareClients) === "handle") return true;
  return Object.values(upstream.tools).some((tool) => tool.unawareClients === "handle");
}
