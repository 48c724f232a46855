import type { TaskRecord } from "../store/contract.js";
import type { UpstreamCaller } from "../upstream/caller.js";

/** A caller that resumes response streams (an HTTP upstream's). */
export type StreamCaller = UpstreamCaller & Required<Pick<UpstreamCaller, "resumeStream">>;
import type { NativeCaller } from "./native/native-caller.js";
import { ToolHints } from "./tool-hints.js";

/** One upstream as the engine knows it: how to call it, and the config's word on re-running a tool. */
export interface UpstreamEntry {
  caller: UpstreamCaller;
  /** `upstreams[].tools.<name>.retryOnOwnerLoss`: true or false overrides the annotations. */
  retryOnOwnerLoss(tool: string): boolean | undefined;
  /** The upstream's tools/list as read once for every use (annotations, task support); made here when absent. */
  hints?: ToolHints;
  /** How calls run as the upstream's own tasks, when it runs any. */
  native?: NativeCaller;
}

/**
 * Whether a task whose owner stopped may run again on a live replica (design: Replicas). Off
 * unless `tasks.maxAttempts` > 1; then for tools the config marks `retryOnOwnerLoss: true`, or
 * (unless the config says false) whose upstream annotations say `readOnlyHint` or
 * `idempotentHint`. Never past `maxAttempts` runs, and never without the call's params.
 */
export class RerunPolicy {
  private readonly upstreams = new Map<string, { entry: UpstreamEntry; hints: ToolHints }>();

  constructor(
    private readonly maxAttempts: number,
    private readonly clock: () => number,
  ) {}

  add(name: string, entry: UpstreamEntry): void {
    this.upstreams.set(name, { entry, hints: entry.hints ?? new ToolHints(entry.caller, this.clock) });
  }

  /** The bridge of an upstream whose own tasks outlive this replica (an HTTP upstream). */
  native(upstream: string): NativeCaller | undefined {
    const native = this.upstreams.get(upstream)?.entry.native;
    return native?.tasks.durable ? native : undefined;
  }

  resumable(upstream: string): boolean {
    return this.native(upstream) !== undefined;
  }

  /** The caller that resumes a response stream of this upstream another replica opened (HTTP). */
  streams(upstream: string): StreamCaller | undefined {
    const caller = this.upstreams.get(upstream)?.entry.caller;
    return caller?.resumeStream ? (caller as StreamCaller) : undefined;
  }

  /**
   * Whether a live replica follows what the stopped owner started rather than ending the task or
   * running the call again: the upstream's own task, or the call's response stream, which
   * the upstream replays from the stored event id.
   */
  follows(task: Pick<TaskRecord, "upstream" | "upstreamTaskId" | "lastEventId" | "parked">): boolean {
    if (task.parked) return false;
    if (task.upstreamTaskId !== undefined) return this.resumable(task.upstream);
    return task.lastEventId !== undefined && this.streams(task.upstream) !== undefined;
  }

  caller(upstream: string): UpstreamCaller | undefined {
    return this.upstreams.get(upstream)?.entry.caller;
  }

  get max(): number {
    return this.maxAttempts;
  }

  async allows(task: Pick<TaskRecord, "attempt" | "requestParams" | "upstream" | "tool">): Promise<boolean> {
    if (task.attempt >= this.maxAttempts || task.requestParams === undefined) return false;
    return this.mayRerun(task.upstream, task.tool);
  }

  /**
   * Whether a call of this tool could ever run again. Only then does a task keep its arguments
   * (docs/operations/security.md, Upstream credentials: tool arguments are not stored otherwise); with re-runs off
   * this answers at once, without asking the upstream anything.
   */
  async mayRerun(upstream: string, tool: string): Promise<boolean> {
    const known = this.upstreams.get(upstream);
    if (!known || this.maxAttempts <= 1) return false;
    const configured = known.entry.retryOnOwnerLoss(tool);
    if (configured !== undefined) return configured;
    const hints = await known.hints.of(tool).catch(() => undefined);
    return hints?.readOnlyHint === true || hints?.idempotentHint === true;
  }
}
