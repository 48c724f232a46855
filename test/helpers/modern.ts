import { ACCEPT_BOTH } from "./raw.js";

export const MODERN = "2026-07-28";
export const TASKS_EXT = "io.modelcontextprotocol/tasks";
export const WITH_TASKS = { extensions: { [TASKS_EXT]: {} } };

/**
 * Which param `Mcp-Name` mirrors, written out from SEP-2243 and the tasks extension rather than
 * imported from src/jsonrpc/versions.ts: the test client builds its headers on its own, so a wrong
 * entry in the gateway's table fails a test instead of agreeing with itself.
 */
const NAME_PARAM: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

export interface ModernOptions {
  capabilities?: Record<string, unknown>;
  /** Replace or drop (undefined) headers. */
  headers?: Record<string, string | undefined>;
  meta?: Record<string, unknown>;
  id?: string | number;
}

let nextId = 1;

/** A 2026-07-28 request built from the wire format (https://modelcontextprotocol.io/specification/2026-07-28/basic): full _meta and routing headers. */
export function modernRequest(url: string, method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}): Request {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
    "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
    ...options.meta,
  };
  const headers: Record<string, string> = { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": method };
  const nameParam = NAME_PARAM[method];
  if (nameParam && typeof params[nameParam] === "string") headers["mcp-name"] = params[nameParam] as string;
  for (const [k, v] of Object.entries(options.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const body = { jsonrpc: "2.0", id: options.id ?? nextId++, method, params: { ...params, _meta: meta } };
  return new Request(url, { method: "POST", headers, body: JSON.stringify(body) });
}

/** Status, headers and the JSON-RPC answer of a reply (the answer frame of an SSE stream). */
export async function readModern(res: Response) {
  const text = await res.text();
  let json: any;
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const frames = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    json = frames.find((f) => "result" in f || "error" in f);
  } else json = text ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, body: json };
}

export async function modern(url: string, method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}) {
  return readModern(await fetch(modernRequest(url, method, params, options)));
}

/** tasks/get with the extension declared, as a tasks-extension client polls. */
export async function getTask(url: string, taskId: string) {
  return modern(url, "tasks/get", { taskId }, { capabilities: WITH_TASKS });
}
