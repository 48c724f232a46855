import { GatewayError, storeCall } from "../../wire/errors.js";
import { success } from "../../jsonrpc/message.js";
import { callerFor, policyOf, type ToolPolicy } from "../../tasks/policy.js";
import type { CallTarget } from "../../tasks/request-state.js";
import type { TaskCall } from "../../tasks/types.js";
import type { SyncOptions } from "../../tasks/sync-call.js";
import type { ModernCall, ModernFront } from "../modern/modern-front.js";
import { declaresTasks, TASKS_EXTENSION } from "../modern/wire.js";
import { REQUIRED_CAPABILITIES, type TasksExtensionDeps } from "./deps.js";
import { retryOf, runRound, syncCall, targetOf } from "./mrtr.js";
import { createTaskResult } from "./render.js";
import { serveModernCall, takesModernCall } from "../unaware/modern.js";

/**
 * tools/call on the modern wire: the decision table of design.md (the tasks extension's rows, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, the
 * server alone decides), with MRTR for questions asked while the call is still synchronous
 * (MRTR, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr): `input_required` + a signed `requestState` naming the parked call, and the retry,
 * on any replica, continuing it. A call that may become a task detaches only once no round is
 * open (MRTR rounds are resolved before a CreateTaskResult, the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
 */
export function toolsCall(deps: TasksExtensionDeps, call: ModernCall, front: ModernFront): Promise<Response> {
  // Not an async function: a plain call (most of them) makes no promise before the round's own.
  try {
    const target = targetOf(call.request, "tools/call");
    const { tasks, upstream, native } = deps;
    const policy = policyOf(tasks, upstream, target.name, native);
    return policy instanceof Promise ? policy.then((known) => decide(deps, call, front, target, known)) : decide(deps, call, front, target, policy);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The decision table's row for this call, once the tool's policy is known. */
function decide(deps: TasksExtensionDeps, call: ModernCall, front: ModernFront, target: CallTarget, policy: ToolPolicy): Promise<Response> {
  const name = target.name;
  const declared = declaresTasks(call.client.capabilities);
  if (!declared && takesModernCall(deps.unaware, call, name)) return serveModernCall(deps.unaware, call, front);
  // Required by the config: refused (-32021). Required by the upstream only: the caller
  // waits while taskgate follows the upstream's task, with MRTR rounds for its questions.
  if (!declared && policy.taskSupport === "required" && !policy.requiredByUpstream)
    throw new GatewayError("missing_capability", `tool '${name}' runs only as a task: declare ${TASKS_EXTENSION}`, REQUIRED_CAPABILITIES);
  const retry = retryOf(deps, call.request, target);
  const mayBeTask = declared && policy.taskSupport !== "forbidden";
  // Draining: no new task here; the client retries on a replica that stays (HTTP 503).
  if (mayBeTask && !retry && deps.engine.isDraining) throw new GatewayError("shutting_down");
  const asked = syncCall(deps, call, callerFor(policy, mayBeTask, deps.native, deps.caller ?? deps.relay), policy.maxDurationMs);
  // Without the extension (or for a forbidden tool) the call never becomes a task: it stays synchronous.
  if (!mayBeTask) return runRound(deps, call, front, target, retry, asked, {});
  const options: SyncOptions = { detachAfterMs: policy.taskSupport === "required" ? 0 : policy.detachAfterMs };
  if (retry) return runRound(deps, call, front, target, retry, asked, options);
  return admitted(deps, call, front, target, asked, policy, options);
}

/** A call that may become a task: counted against the caller's task limit before anything starts, so a refusal is a clean 429. */
async function admitted(
  deps: TasksExtensionDeps,
  call: ModernCall,
  front: ModernFront,
  target: CallTarget,
  asked: TaskCall,
  policy: ToolPolicy,
  options: SyncOptions,
): Promise<Response> {
  const task = await storeCall(() => deps.engine.admit(asked));
  if (policy.taskSupport === "required") {
    const created = await storeCall(() => deps.engine.detachNow(task));
    return Response.json(success(call.request.id, createTaskResult(created)));
  }
  return runRound(deps, call, front, target, undefined, task, options);
}
