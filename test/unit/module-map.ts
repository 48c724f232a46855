/**
 * The module map of src/: every folder, what it owns, and which folders its code may import at
 * run time (`import type` is free). test/unit/import-direction.test.ts is generated from it and
 * docs/contributing/architecture.md holds its table (`moduleMapTable`), checked to be current.
 *
 * `exceptions` are arrows today's tree has that the map does not want; each names the change that
 * removes it. An exception nobody uses any more fails the test, so the list only shrinks.
 */
export interface ModuleEntry {
  /** A folder of src/ (its subfolders belong to it), or a top-level file. */
  name: string;
  owns: string;
  mayImport: readonly string[];
  exceptions?: ReadonlyArray<{ to: string; why: string }>;
}

export const MODULE_MAP: readonly ModuleEntry[] = [
  { name: "jsonrpc", owns: "JSON-RPC framing and decoding, error codes by name, MCP protocol versions", mayImport: [] },
  {
    name: "util",
    owns: "small pure helpers with no home of their own (the one backoff, the forwarded Authorization, a URL as taskgate writes it, the package's version)",
    mayImport: [],
  },
  {
    name: "config",
    owns: "the one schema; reading files, env and flags, once; the configuration reference (docs/reference/configuration.md) and config/taskgate.example.yaml",
    mayImport: [],
  },
  { name: "observability", owns: "logger, metrics, tracing, audit, request outcomes", mayImport: ["jsonrpc", "util"] },
  { name: "auth", owns: "who is calling: bearer, JWT, trusted header, OAuth token checks", mayImport: ["config", "observability"] },
  {
    name: "store",
    owns: "the Store and EventBus contracts, bus channel names; the transition table and each named transition's rule (task-rules.ts); memory/ and redis/ (keys.ts, one Lua script per transition)",
    mayImport: ["jsonrpc", "observability", "util"],
  },
  {
    name: "upstream",
    owns: "the connector contract; the caller contract the engine is handed (caller.ts); mux/ (the relay, pool caller, bulkhead, server→client questions: the multiplexer); stdio/ (spawn, framing, pool, kill ladder) and http/ (client, SSE); backoff loops",
    mayImport: ["config", "jsonrpc", "observability", "util"],
  },
  {
    name: "tasks",
    owns: "the engine: decide, detach, own under lease, input bridge, cancel, reaper",
    mayImport: ["jsonrpc", "observability", "store", "upstream", "util"],
  },
  {
    name: "wire",
    owns: "what a client is told: the errors table and wireError (every internal error to its wire error), the JSON-or-SSE reply, SSE framing",
    mayImport: ["jsonrpc", "observability", "store", "tasks"],
  },
  {
    name: "sessions",
    owns: "the legacy sessions the dialects reach (beside the engine): open, require, end, kept in the store; the per-replica cache",
    mayImport: ["store", "wire"],
  },
  {
    name: "dialects",
    owns: "the legacy session wire and the modern stateless wire; tasks-2025-11-25/, tasks-extension/, unaware/; passthrough/ (a session's call client, the bridge to an upstream's own tasks)",
    mayImport: ["config", "jsonrpc", "observability", "sessions", "tasks", "upstream", "util", "wire"],
  },
  {
    name: "http",
    owns: "the hono app: routes, guards (Host, Origin, CORS, auth, scopes, size), observing requests, health; the direct path in front of it",
    mayImport: ["auth", "config", "dialects", "jsonrpc", "observability", "util", "wire"],
  },
  {
    name: "admin",
    owns: "the operators' listener: task list, cancel, status page; the `taskgate tasks` command",
    mayImport: ["config", "jsonrpc", "observability", "tasks", "wire"],
  },
  { name: "demo", owns: "the bundled demo MCP server: a program of its own, built on the SDK, sharing no code with taskgate", mayImport: [] },
  {
    name: "app.ts",
    owns: "the composition root: builds every part from the config and wires them, no logic",
    mayImport: ["admin", "auth", "config", "dialects", "http", "observability", "sessions", "store", "tasks", "upstream", "util"],
  },
  {
    name: "cli.ts",
    owns: "the command line: load the config, start, stop on signals; the demo-server and tasks commands",
    mayImport: ["admin", "app.ts", "config", "demo", "observability", "util"],
  },
];

/** The Markdown table docs/contributing/architecture.md holds between its markers. */
export const MAP_START = "<!-- module-map:start -->";
export const MAP_END = "<!-- module-map:end -->";

export function moduleMapTable(): string {
  const rows = MODULE_MAP.map((m) => {
    const may = m.mayImport.length ? m.mayImport.join(", ") : "nothing of taskgate";
    const exceptions = (m.exceptions ?? []).map((e) => `${e.to} (${e.why})`).join("; ");
    return `| \`${m.name}\` | ${m.owns} | ${may} | ${exceptions} |`;
  });
  return [MAP_START, "| module | owns | may import | known exceptions |", "| --- | --- | --- | --- |", ...rows, MAP_END].join("\n");
}
