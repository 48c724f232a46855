import type { JsonRpcResponse } from "../jsonrpc/message.js";
import type { UpstreamCaller } from "../upstream/caller.js";

/** What a tool's annotations say about repeating it (MCP `ToolAnnotations`). */
export interface RepeatHints {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

const FRESH_MS = 60_000;
/** A tool not in the list read is looked for again, at most this often (a tool added since). */
const MISS_MS = 2_000;

interface ToolFacts {
  hints: RepeatHints;
  /** The tool's `execution.taskSupport` (2025-11-25), when it declares one. */
  taskSupport?: string;
}
const MAX_PAGES = 20;
const CLIENT = { sessionId: "taskgate:tool-hints", capabilities: {}, own: true as const };

/**
 * The upstream's own word on its tools, read from its `tools/list` and kept for a minute (or
 * until it says the list changed): which are safe to repeat (annotations) and which it runs as
 * tasks of its own (`execution.taskSupport`). Annotations are hints (the spec says not to
 * trust them from untrusted servers); taskgate acts on them only when re-runs are switched on.
 */
export class ToolHints {
  /** `read`: the list, once it came. */
  private cached?: { at: number; tools: Promise<Map<string, ToolFacts>>; read?: Map<string, ToolFacts> };
  private seq = 0;

  constructor(
    private readonly caller: UpstreamCaller,
    private readonly clock: () => number,
  ) {}

  async of(tool: string): Promise<RepeatHints | undefined> {
    return (await this.facts(tool))?.hints;
  }

  /** The tool's `execution.taskSupport` as the upstream declares it. */
  async taskSupport(tool: string): Promise<string | undefined> {
    return (await this.facts(tool))?.taskSupport;
  }

  /**
   * `taskSupport(tool)` without waiting, where the list read lately answers it as `facts` would
   * (fresh, and the tool in it or looked for within MISS_MS); else "unknown".
   */
  taskSupportNow(tool: string): string | undefined | "unknown" {
    const cached = this.cached;
    if (!cached?.read) return "unknown";
    const age = this.clock() - cached.at;
    if (age > FRESH_MS) return "unknown";
    const found = cached.read.get(tool);
    // A declaration that is neither value the spec names means no task support, as it does to `support`.
    if (found) return found.taskSupport === "unknown" ? undefined : found.taskSupport;
    return age < MISS_MS ? undefined : "unknown";
  }

  /** notifications/tools/list_changed: read the list again on next use. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async facts(tool: string): Promise<ToolFacts | undefined> {
    if (!this.cached || this.clock() - this.cached.at > FRESH_MS) this.refresh();
    const found = (await this.cached!.tools).get(tool);
    if (found || this.clock() - this.cached!.at < MISS_MS) return found;
    this.refresh();
    return (await this.cached!.tools).get(tool);
  }

  private refresh(): void {
    const tools = this.fetch();
    const cached: NonNullable<ToolHints["cached"]> = { at: this.clock(), tools };
    this.cached = cached;
    tools.then(
      (read) => (cached.read = read),
      () => {
        if (this.cached === cached) this.cached = undefined;
      },
    );
  }

  private async fetch(): Promise<Map<string, ToolFacts>> {
    const tools = new Map<string, ToolFacts>();
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const request = { jsonrpc: "2.0" as const, id: `hints-${++this.seq}`, method: "tools/list", params };
      const response: JsonRpcResponse = await this.caller.call(CLIENT, request, { send: () => false });
      if ("error" in response) throw new Error(`tools/list failed: ${response.error.message}`);
      for (const tool of (response.result.tools as Array<{ name?: unknown; annotations?: RepeatHints; execution?: { taskSupport?: unknown } }> | undefined) ??
        [])
        if (typeof tool.name === "string") tools.set(tool.name, factsOf(tool));
      cursor = response.result.nextCursor;
      if (typeof cursor !== "string") break;
    }
    return tools;
  }
}

function factsOf(tool: { annotations?: RepeatHints; execution?: { taskSupport?: unknown } }): ToolFacts {
  const taskSupport = tool.execution?.taskSupport;
  return typeof taskSupport === "string" ? { hints: tool.annotations ?? {}, taskSupport } : { hints: tool.annotations ?? {} };
}
