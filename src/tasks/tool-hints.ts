import type { JsonRpcResponse } from "../jsonrpc/message.js";
import type { UpstreamCaller } from "./caller.js";

/** What a tool's annotations say about repeating it (MCP `ToolAnnotations`). */
export interface RepeatHints {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

const FRESH_MS = 60_000;
const MAX_PAGES = 20;
const CLIENT = { sessionId: "taskgate:tool-hints", capabilities: {} };

/**
 * The upstream's own word on which tools are safe to repeat, read from its `tools/list`
 * annotations and kept for a minute. Annotations are hints (the spec says not to trust them
 * from untrusted servers); taskgate acts on them only when re-runs are switched on.
 */
export class ToolHints {
  private cached?: { at: number; tools: Promise<Map<string, RepeatHints>> };
  private seq = 0;

  constructor(
    private readonly caller: UpstreamCaller,
    private readonly clock: () => number,
  ) {}

  async of(tool: string): Promise<RepeatHints | undefined> {
    if (!this.cached || this.clock() - this.cached.at > FRESH_MS) {
      const tools = this.fetch();
      this.cached = { at: this.clock(), tools };
      tools.catch(() => (this.cached = undefined));
    }
    return (await this.cached.tools).get(tool);
  }

  private async fetch(): Promise<Map<string, RepeatHints>> {
    const tools = new Map<string, RepeatHints>();
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const request = { jsonrpc: "2.0" as const, id: `hints-${++this.seq}`, method: "tools/list", params };
      const response: JsonRpcResponse = await this.caller.call(CLIENT, request, { send: () => false });
      if ("error" in response) throw new Error(`tools/list failed: ${response.error.message}`);
      for (const tool of (response.result.tools as Array<{ name?: unknown; annotations?: RepeatHints }> | undefined) ?? [])
        if (typeof tool.name === "string") tools.set(tool.name, tool.annotations ?? {});
      cursor = response.result.nextCursor;
      if (typeof cursor !== "string") break;
    }
    return tools;
  }
}
