import type { Config, TaskSupport, UnawareClients, UpstreamConfig } from "../config/schema.js";
import type { NativeSupport, UpstreamTasks } from "../upstream/native-tasks/upstream-tasks.js";

export interface ToolPolicy {
  taskSupport: TaskSupport;
  detachAfterMs: number;
  maxDurationMs?: number;
  /** What a caller that declared no task support gets: the tool's, else the upstream's, else tasks.unawareClients. */
  unawareClients: UnawareClients;
  /**
   * How the upstream is called: `always` as a task of its own (it requires one), `task`
   * as one when the front call becomes a task (it allows one, nativeTasks auto); absent: plainly.
   */
  native?: "always" | "task";
  /** `required` comes from the upstream, not from the config: a caller without task support waits for the bridged call instead of being refused. */
  requiredByUpstream?: true;
}

/**
 * A tool's task policy: the config override, else the upstream's `required`, else the
 * configured defaults. The upstream's `forbidden` does not limit taskgate (SDK 1.x servers
 * declare it on every tool by default); its `required` does: such a tool is advertised as
 * required and always called upstream as a task of the upstream's own.
 */
export function toolPolicy(tasks: Config["tasks"], upstream: UpstreamConfig, tool: string, support?: NativeSupport): ToolPolicy {
  const override = Object.hasOwn(upstream.tools, tool) ? upstream.tools[tool] : undefined;
  const required = support === "required" && override?.taskSupport === undefined;
  const policy: ToolPolicy = {
    taskSupport: override?.taskSupport ?? (required ? "required" : tasks.defaultTaskSupport),
    detachAfterMs: override?.detachAfterMs ?? tasks.detachAfterMs,
    unawareClients: override?.unawareClients ?? upstream.unawareClients ?? tasks.unawareClients,
  };
  if (override?.maxDurationMs !== undefined) policy.maxDurationMs = override.maxDurationMs;
  if (required) policy.requiredByUpstream = true;
  if (support === "required") policy.native = "always";
  else if (support === "optional" && (override?.nativeTasks ?? upstream.nativeTasks) === "auto") policy.native = "task";
  return policy;
}

/** Whether any tool of the upstream may be handled for task-unaware callers: then tools/list shows them the gateway tools. */
export function handlesUnaware(tasks: Config["tasks"], upstream: UpstreamConfig): boolean {
  if ((upstream.unawareClients ?? tasks.unawareClients) === "handle") return true;
  return Object.values(upstream.tools).some((tool) => tool.unawareClients === "handle");
}

/**
 * The policy with what the upstream declares for the tool, when it runs tasks of its own: at once
 * when that is known without waiting (`supportNow`), as it is for most calls.
 */
export function policyOf(
  tasks: Config["tasks"],
  upstream: UpstreamConfig,
  tool: string,
  native: { tasks: UpstreamTasks } | undefined,
): ToolPolicy | Promise<ToolPolicy> {
  if (!native) return toolPolicy(tasks, upstream, tool);
  let known: NativeSupport | undefined | "unknown";
  try {
    known = native.tasks.supportNow ? native.tasks.supportNow(tool) : "unknown";
  } catch {
    known = "unknown";
  }
  if (known !== "unknown") return toolPolicy(tasks, upstream, tool, known);
  return native.tasks.support(tool).then(
    (support) => toolPolicy(tasks, upstream, tool, support),
    () => toolPolicy(tasks, upstream, tool),
  );
}

/** Who makes the call: the bridge when the upstream runs it as its own task (`asTask`: the front call is or may become a task), else `plain`. */
export function callerFor<C>(policy: ToolPolicy, asTask: boolean, native: C | undefined, plain: C): C {
  if (!native) return plain;
  return policy.native === "always" || (policy.native === "task" && asTask) ? native : plain;
}
