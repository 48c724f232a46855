import { createHash } from "node:crypto";
import { ACCEPT_BOTH, messagesOf } from "./raw.js";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The auth section of a bearer-mode gateway whose token for each name is `tok-<name>`. */
export function bearerAuth(...names: string[]) {
  return { mode: "bearer", bearer: { tokens: names.map((n) => ({ sha256: sha256(`tok-${n}`), principal: n })) } };
}

export const as = (name: string) => ({ authorization: `Bearer tok-${name}` });

/** The hash audit lines carry for a bearer principal (src/observability/audit.ts). */
export const auditHash = (name: string) => sha256(`user:${name}`).slice(0, 16);

/** A 2025-11-25 session opened with the given headers (credentials); returns its id. */
export async function openSessionAs(url: string, headers: Record<string, string>, capabilities: Record<string, unknown> = {}): Promise<string> {
  const res = await legacy(
    url,
    { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } } },
    headers,
  );
  const id = res.headers.get("mcp-session-id");
  if (!res.ok || !id) throw new Error(`initialize answered ${res.status}: ${await res.text()}`);
  await legacy(url, { jsonrpc: "2.0", method: "notifications/initialized" }, { ...headers, "mcp-session-id": id });
  return id;
}

export function legacy(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-protocol-version": "2025-11-25", ...headers },
    body: JSON.stringify(body),
  });
}

/** Status and the JSON-RPC error of an answer, without the id: what must read alike for foreign and unknown. */
export async function errorOf(res: Response) {
  const [message] = await messagesOf(res);
  return { status: res.status, error: message?.error, result: message?.result };
}
