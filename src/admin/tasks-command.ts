import { parseArgs } from "node:util";
import { ENV_NAMES } from "../config/env.js";
import { formatTaskTable } from "./task-table.js";

export const ADMIN_URL_ENV = "TASKGATE_ADMIN_URL";
const DEFAULT_ADMIN_URL = "http://127.0.0.1:9090";

export const TASKS_USAGE = `Usage:
  taskgate tasks list [--status S[,S]] [--upstream U] [--tool T] [--limit N] [--cursor C] [--json]
  taskgate tasks get TASK_ID
  taskgate tasks cancel TASK_ID
Options for all: --admin-url URL (${ADMIN_URL_ENV}, default ${DEFAULT_ADMIN_URL}), --token T (${ENV_NAMES.adminToken})`;

const OPTIONS = {
  "admin-url": { type: "string" },
  token: { type: "string" },
  status: { type: "string" },
  upstream: { type: "string" },
  tool: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  json: { type: "boolean" },
} as const;

type Out = { stdout(text: string): void; stderr(text: string): void };
const processOut: Out = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

/**
 * `taskgate tasks list|get|cancel`: a client of the admin API of a running taskgate. Exit status
 * 0 when done, 1 when the gateway refused or could not be reached, 2 on bad arguments.
 */
export async function tasksCommand(argv: string[], env: Record<string, string | undefined>, out: Out = processOut): Promise<number> {
  // biome-ignore lint/suspicious/noImplicitAnyLet: assigned once in the try below; its type is parseArgs' own, too long to write out.
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    out.stderr(`${(err as Error).message}\n${TASKS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [verb, id, ...extra] = positionals;
  const token = values.token ?? env[ENV_NAMES.adminToken];
  const needsId = verb === "get" || verb === "cancel";
  if (!["list", "get", "cancel"].includes(verb ?? "") || (needsId ? !id || extra.length > 0 : positionals.length > 1) || !token) {
    out.stderr(`${!token ? `an admin token is needed (--token or ${ENV_NAMES.adminToken})\n` : ""}${TASKS_USAGE}\n`);
    return 2;
  }
  const base = (values["admin-url"] ?? env[ADMIN_URL_ENV] ?? DEFAULT_ADMIN_URL).replace(/\/+$/, "");
  const request =
    verb === "list"
      ? listRequest(base, values)
      : verb === "get"
        ? { url: `${base}/api/tasks/${encodeURIComponent(id!)}`, method: "GET" }
        : { url: `${base}/api/tasks/${encodeURIComponent(id!)}/cancel`, method: "POST" };
  let res: Response;
  try {
    res = await fetch(request.url, { method: request.method, headers: { authorization: `Bearer ${token}` } });
  } catch (err) {
    out.stderr(`taskgate tasks: cannot reach ${base}: ${(err as Error).message}\n`);
    return 1;
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    out.stderr(`taskgate tasks: ${res.status} ${String(body.error ?? res.statusText)}\n`);
    return 1;
  }
  if (verb === "list" && !values.json) out.stdout(formatTaskTable(body.tasks as Array<Record<string, unknown>>, body.nextCursor as string | undefined));
  else out.stdout(`${JSON.stringify(verb === "cancel" ? body.task : body, null, 2)}\n`);
  return 0;
}

function listRequest(base: string, values: Partial<Record<"status" | "upstream" | "tool" | "limit" | "cursor", string>>) {
  const query = new URLSearchParams();
  for (const key of ["status", "upstream", "tool", "limit", "cursor"] as const) if (values[key] !== undefined) query.set(key, values[key]);
  return { url: `${base}/api/tasks${query.size ? `?${query}` : ""}`, method: "GET" };
}
