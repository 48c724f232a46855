import { CallReply } from "../../http/reply.js";
import type { ModernCall, ModernFront } from "../modern/modern-front.js";
import { noServerRequests } from "../modern/modern-front.js";
import type { TasksBDeps } from "./deps.js";
import { renderOutcome, retryOf, storeFailure, syncCall, targetOf } from "./mrtr.js";

/**
 * prompts/get and resources/read on the modern wire: relayed, but a question the upstream asks
 * while one runs is an MRTR round (§3.14 allows these two besides tools/call), parked like a
 * tools/call's and continued by the client's retry on any replica. Neither is ever a task (the
 * extension covers tools/call only, §3.3): no detachAfterMs, and the answer is the request's own.
 */
export function promptOrResource(method: "prompts/get" | "resources/read") {
  return async (deps: TasksBDeps, call: ModernCall, front: ModernFront): Promise<Response> => {
    const target = targetOf(call.request, method);
    const retry = retryOf(deps, call.request, target);
    const reply = new CallReply(call.accepts, front.keepAliveMs);
    const outcome = retry
      ? deps.engine.sync.resume(retry.ticket, call.principal, call.request.id, retry.responses, {})
      : deps.engine.sync.start(syncCall(deps, call, deps.relay), target, noServerRequests(reply), {});
    const work = outcome.then((o) => renderOutcome(deps, call.request, front, o)).catch((err: unknown) => storeFailure(call.request, err));
    return reply.respond(work);
  };
}
