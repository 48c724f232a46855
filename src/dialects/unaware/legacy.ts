import type { LogContext } from "../../observability/log-context.js";
import { CallReply, type Accepts } from "../../wire/reply.js";
import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import type { SessionRecord } from "../../store/contract.js";
import { callClientId, sessionClient } from "../passthrough/client-id.js";
import type { Relay } from "../../upstream/mux/relay.js";
import type { Unaware } from "./unaware.js";

/**
 * Whether a legacy-era request is one for handle mode: a session that declared no `tasks`
 * capability (every session before 2025-11-25), a tools/call without `params.task` of a handled
 * tool or gateway tool, or tools/list. A task-aware caller's requests never come here.
 */
export function takesLegacy(unaware: Unaware | undefined, session: SessionRecord, request: JsonRpcRequest): unaware is Unaware {
  if (!unaware?.active || session.clientCapabilities.tasks !== undefined) return false;
  if (request.method === "tools/list") return true;
  return request.method === "tools/call" && request.params?.task === undefined && unaware.takesCall(String(request.params?.name ?? ""));
}

/** Serve it: tools/list relayed with the gateway tools added, tools/call through the engine. */
export async function serveLegacy(
  unaware: Unaware,
  relay: Relay,
  session: SessionRecord,
  request: JsonRpcRequest,
  reply: { accepts: Accepts; keepAliveMs: number; authorization?: string; log?: LogContext },
): Promise<Response> {
  const client = sessionClient(session, reply.authorization);
  const out = new CallReply(reply.accepts, reply.keepAliveMs);
  if (request.method === "tools/list") return out.respond(relay.call(client, request, out).then((r) => unaware.listed(request, r)));
  // A client id of its own, as a task call of the 2025-11-25 tasks has: its questions go to the task, never to the session.
  const call = { request, upstreamRequest: request, client: { ...client, sessionId: callClientId("u:") }, principal: session.principal, log: reply.log };
  const { answer } = await unaware.call(call, out);
  unaware.track(session.id, request.id, call.client, answer);
  return out.respond(answer);
}
