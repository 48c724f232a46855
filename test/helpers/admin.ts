import { messagesOf, openSession, post } from "./raw.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** GET/POST on the admin API with the token (or another `authorization`). */
export async function admin(baseUrl: string, path: string, { method = "GET", token = ADMIN_TOKEN }: { method?: string; token?: string | null } = {}) {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const res = await fetch(`${baseUrl}${path}`, { method, headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** A 2025-11-25 task (2025-11-25 session, params.task) made with raw requests; its principal is the session's. */
export async function legacyTask(mcpUrl: string, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const sessionId = await openSession(mcpUrl, {}, "2025-11-25");
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
  const res = await post(mcpUrl, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } }, headers);
  const [reply] = await messagesOf(res);
  const taskId = reply?.result?.task?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(reply)}`);
  return taskId;
}
