import type { JsonRpcResponse } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import type { Relay } from "../../upstream/mux/relay.js";
import { headerDeclarations, type HeaderDeclaration } from "./param-headers.js";

const FRESH_MS = 60_000;
const MAX_PAGES = 20;
const NONE: readonly HeaderDeclaration[] = [];

/**
 * Which arguments of each upstream tool are mirrored into `Mcp-Param-*` headers (SEP-2243), read
 * from the upstream's own `tools/list` and kept until the upstream announces a change of its tools
 * (notifications/tools/list_changed) or for a minute, whichever comes first. When the list cannot
 * be read, no header is demanded: the call itself then meets the same upstream.
 */
export class ToolHeaders {
  private cached?: { at: number; tools: Promise<Map<string, HeaderDeclaration[]>>; read?: Map<string, HeaderDeclaration[]> };

  constructor(
    private readonly relay: Relay,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    relay.listChanged.on((kind) => {
      if (kind === "tools") this.cached = undefined;
    });
  }

  /** The declarations of one tool; empty for a tool without any, or one the list does not name. */
  async of(tool: string): Promise<readonly HeaderDeclaration[]> {
    return this.now(tool) ?? (await this.listed().catch(() => undefined))?.get(tool) ?? [];
  }

  /** What of() answers, when the list read is fresh: no promise for the calls between two reads. */
  now(tool: string): readonly HeaderDeclaration[] | undefined {
    const cached = this.cached;
    if (cached?.read === undefined || this.clock() - cached.at > FRESH_MS) return undefined;
    return cached.read.get(tool) ?? NONE;
  }

  private listed(): Promise<Map<string, HeaderDeclaration[]>> {
    if (!this.cached || this.clock() - this.cached.at > FRESH_MS) {
      const tools = this.fetch();
      const entry: NonNullable<ToolHeaders["cached"]> = { at: this.clock(), tools };
      this.cached = entry;
      tools.then(
        (read) => void (entry.read = read),
        (err: unknown) => {
          if (this.cached === entry) this.cached = undefined;
          this.logger.debug({ err }, "tools/list for x-mcp-header declarations failed");
        },
      );
    }
    return this.cached.tools;
  }

  private async fetch(): Promise<Map<string, HeaderDeclaration[]>> {
    const tools = new Map<string, HeaderDeclaration[]>();
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      // taskgate's own request, straight to the connector: not a client's, so not in the passthrough metrics.
      const response: JsonRpcResponse = await this.relay.connector.request({ method: "tools/list", params });
      if ("error" in response) throw new Error(`tools/list failed: ${response.error.message}`);
      for (const tool of (response.result.tools as Array<{ name?: unknown; inputSchema?: unknown }> | undefined) ?? []) {
        const declarations = typeof tool.name === "string" ? headerDeclarations(tool.inputSchema) : undefined;
        if (declarations && declarations.length > 0) tools.set(tool.name as string, declarations);
      }
      cursor = response.result.nextCursor;
      if (typeof cursor !== "string") break;
    }
    return tools;
  }
}
