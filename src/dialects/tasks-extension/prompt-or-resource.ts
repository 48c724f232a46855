import type { ModernCall, ModernFront } from "../modern/modern-front.js";
import type { TasksExtensionDeps } from "./deps.js";
import { retryOf, runRound, syncCall, targetOf } from "./mrtr.js";

/**
 * prompts/get and resources/read on the modern wire: relayed, but a question the upstream asks
 * while one runs is an MRTR round (MRTR, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr allows these two besides tools/call), parked like a
 * tools/call's and continued by the client's retry on any replica. Neither is ever a task (the
 * extension covers tools/call only, the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md): no detachAfterMs, and the answer is the request's own.
 */
export function promptOrResource(method: "prompts/get" | "resources/read") {
  return async (deps: TasksExtensionDeps, call: ModernCall, front: ModernFront): Promise<Response> => {
    const target = targetOf(call.request, method);
    return runRound(deps, call, front, target, retryOf(deps, call.request, target), syncCall(deps, call, deps.relay), {});
  };
}
