import { CallReply } from "../../wire/reply.js";
import { noServerRequests, type ModernCall, type ModernFront } from "../modern/modern-front.js";
import type { Relay } from "../../upstream/mux/relay.js";
import type { Unaware } from "./unaware.js";

/**
 * A 2026-07-28 tools/call for handle mode: the caller declared no tasks extension, the tool is a
 * gateway tool or a handled one, and the request is no MRTR retry (handle mode never opens a
 * round: a question detaches the call, sync-call.ts `detachOnInput`).
 */
export function takesModernCall(unaware: Unaware | undefined, call: ModernCall, name: string): unaware is Unaware {
  return unaware !== undefined && call.request.params?.requestState === undefined && unaware.takesCall(name);
}

export async function serveModernCall(unaware: Unaware, call: ModernCall, front: ModernFront): Promise<Response> {
  const reply = new CallReply(call.accepts, front.keepAliveMs);
  const { answer } = await unaware.call(call, noServerRequests(reply));
  return reply.respond(answer.then((r) => front.shape(call.request, r)));
}

/** tools/list of a caller without the extension: relayed, shaped, with the gateway tools added. */
export function listModern(unaware: Unaware, relay: Relay, call: ModernCall, front: ModernFront): Promise<Response> {
  const reply = new CallReply(call.accepts, front.keepAliveMs);
  const work = relay.call(call.client, call.upstreamRequest, noServerRequests(reply)).then((r) => front.shape(call.request, unaware.listed(call.request, r)));
  return reply.respond(work);
}
