import { GatewayError, storeCall } from "../../http/errors.js";
import { CallReply } from "../../http/reply.js";
import { failure, success, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { StoreUnavailableError } from "../../store/contract.js";
import { toolPolicy } from "../../tasks/policy.js";
import type { ParkTicket } from "../../tasks/request-state.js";
import type { SyncOptions, SyncOutcome } from "../../tasks/sync-call.js";
import type { TaskCall } from "../../tasks/types.js";
import type { ModernCall, ModernFront } from "../modern/modern-front.js";
import { noServerRequests } from "../modern/modern-front.js";
import { declaresTasks, TASKS_EXTENSION } from "../modern/wire.js";
import { checkInputSize } from "../input-size.js";
import { REQUIRED_CAPABILITIES, type TasksBDeps } from "./deps.js";
import { createTaskResult } from "./render.js";

/**
 * tools/call on the modern wire: the decision table of design.md (dialect B rows; spec §3.2, the
 * server alone decides), with MRTR for questions asked while the call is still synchronous
 * (§3.14): `input_required` + a signed `requestState` naming the parked call, and the retry,
 * on any replica, continuing it. A call that may become a task detaches only once no round is
 * open (MRTR rounds are resolved before a CreateTaskResult, §3.5).
 */
export async function toolsCall(deps: TasksBDeps, call: ModernCall, front: ModernFront): Promise<Response> {
  const name = call.request.params?.name;
  if (typeof name !== "string") throw new GatewayError("invalid_params", "params.name must be a string");
  const policy = toolPolicy(deps.tasks, deps.upstream, name);
  const declared = declaresTasks(call.client.capabilities);
  if (!declared && policy.taskSupport === "required")
    throw new GatewayError("missing_capability", `tool '${name}' runs only as a task: declare ${TASKS_EXTENSION}`, REQUIRED_CAPABILITIES);
  const retry = retryOf(deps, call.request, name);
  const mayBeTask = declared && policy.taskSupport !== "forbidden";
  // Draining: no new task here; the client retries on a replica that stays (HTTP 503).
  if (mayBeTask && !retry && deps.engine.isDraining) throw new GatewayError("shutting_down");
  const asked = taskCall(deps, call, policy.maxDurationMs);
  // Counted against the caller's task limit before anything starts, so a refusal is a clean 429.
  const task = mayBeTask && !retry ? await storeCall(() => deps.engine.admit(asked)) : asked;
  if (!retry && declared && policy.taskSupport === "required") {
    const created = await storeCall(() => deps.engine.detachNow(task));
    return Response.json(success(call.request.id, createTaskResult(created)));
  }
  // Without the extension (or for a forbidden tool) the call never becomes a task: it stays synchronous.
  const options: SyncOptions = mayBeTask ? { detachAfterMs: policy.taskSupport === "required" ? 0 : policy.detachAfterMs } : {};
  const reply = new CallReply(call.accepts, front.keepAliveMs);
  const outcome = retry
    ? deps.engine.sync.resume(retry.ticket.parkId, call.principal, call.request.id, retry.responses, options)
    : deps.engine.sync.start(task, noServerRequests(reply), options);
  const work = outcome.then((o) => render(deps, call.request, front, o)).catch((err: unknown) => storeFailure(call.request, err));
  return reply.respond(work);
}

/** A retry of an MRTR round: its requestState verified (forged or expired: -32602), its answers. */
function retryOf(deps: TasksBDeps, request: JsonRpcRequest, tool: string): { ticket: ParkTicket; responses: Record<string, unknown> } | undefined {
  const params = request.params ?? {};
  if (params.requestState === undefined) return undefined;
  const checked = deps.requestState.verify(params.requestState, Date.now());
  if (!checked.ok) throw new GatewayError("invalid_params", checked.reason === "expired" ? "requestState has expired" : "requestState is not valid");
  if (checked.ticket.tool !== tool) throw new GatewayError("invalid_params", "requestState belongs to another tool");
  const responses = params.inputResponses ?? {};
  if (typeof responses !== "object" || responses === null || Array.isArray(responses))
    throw new GatewayError("invalid_params", "params.inputResponses must be an object");
  checkInputSize(responses, deps.maxInputResponsesBytes);
  return { ticket: checked.ticket, responses: responses as Record<string, unknown> };
}

function render(deps: TasksBDeps, request: JsonRpcRequest, front: ModernFront, outcome: SyncOutcome | undefined): JsonRpcResponse {
  if (outcome === undefined) return failure(request.id, { code: -32602, message: "Invalid params: requestState has expired (the parked call is gone)" });
  if ("inline" in outcome) return front.shape(request, outcome.inline);
  if ("task" in outcome) return success(request.id, createTaskResult(outcome.task));
  const { inputRequests, ticket } = outcome.input;
  const result = { resultType: "input_required", inputRequests, requestState: deps.requestState.sign(ticket) };
  return front.shape(request, success(request.id, result));
}

function taskCall(deps: TasksBDeps, call: ModernCall, maxDurationMs: number | undefined): TaskCall {
  const task: TaskCall = {
    caller: deps.caller ?? deps.relay,
    upstream: deps.upstream.name,
    client: call.client,
    principal: call.principal,
    dialect: "B",
    request: withoutMrtrFields(call.upstreamRequest),
    ttlMs: Math.min(deps.tasks.defaultTtlMs, deps.tasks.maxTtlMs),
    pollIntervalMs: deps.tasks.pollIntervalMs,
  };
  if (maxDurationMs !== undefined) task.maxDurationMs = maxDurationMs;
  return task;
}

/** MRTR fields are taskgate's to read, never the legacy upstream's. */
function withoutMrtrFields(request: JsonRpcRequest): JsonRpcRequest {
  if (!request.params) return request;
  const { inputResponses: _responses, requestState: _state, ...params } = request.params;
  return { ...request, params };
}

function storeFailure(request: JsonRpcRequest, err: unknown): JsonRpcResponse {
  const message = err instanceof StoreUnavailableError ? "task store unavailable" : "Internal error";
  return failure(request.id, { code: -32603, message });
}
