import { GatewayError, wireError } from "../../wire/errors.js";
import { CallReply } from "../../wire/reply.js";
import { failure, success, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { UpstreamCaller } from "../../upstream/caller.js";
import { sameTarget, type CallTarget, type MrtrMethod, type ParkTicket } from "../../tasks/request-state.js";
import type { SyncOptions, SyncOutcome } from "../../tasks/sync-call.js";
import type { TaskCall } from "../../tasks/types.js";
import { noServerRequests, type ModernCall, type ModernFront } from "../modern/modern-front.js";
import { checkInputSize } from "../input-size.js";
import { copyWithout, withFields } from "../../util/with-fields.js";
import type { TasksExtensionDeps } from "./deps.js";
import { createTaskResult } from "./render.js";
import { RPC } from "../../jsonrpc/codes.js";

// What the three requests that may run MRTR rounds (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr, SEP-2322) share: the request a
// requestState is bound to, the retry's checks, the call as the engine runs it, and the answer.

/** A verified retry: the round it continues and the client's answers. */
export interface Retry {
  ticket: ParkTicket;
  responses: Record<string, unknown>;
}

/** What a retry must repeat: tools/call and prompts/get by name, resources/read by URI. */
export function targetOf(request: JsonRpcRequest, method: MrtrMethod): CallTarget {
  const param = method === "resources/read" ? "uri" : "name";
  const value = request.params?.[param];
  if (typeof value !== "string") throw new GatewayError("invalid_params", `params.${param} must be a string`);
  return { method, name: value };
}

/**
 * A retry of an MRTR round: its requestState verified (forged, expired, or issued for another
 * request — another method, tool, prompt or URI: -32602), its answers.
 */
export function retryOf(deps: TasksExtensionDeps, request: JsonRpcRequest, target: CallTarget): Retry | undefined {
  const params = request.params ?? {};
  if (params.requestState === undefined) return undefined;
  const checked = deps.requestState.verify(params.requestState, Date.now());
  if (!checked.ok) throw new GatewayError("invalid_params", checked.reason === "expired" ? "requestState has expired" : "requestState is not valid");
  if (!sameTarget(checked.ticket.target, target)) throw new GatewayError("invalid_params", "requestState belongs to another request");
  const responses = params.inputResponses ?? {};
  if (typeof responses !== "object" || responses === null || Array.isArray(responses))
    throw new GatewayError("invalid_params", "params.inputResponses must be an object");
  checkInputSize(responses, deps.maxInputResponsesBytes);
  return { ticket: checked.ticket, responses: responses as Record<string, unknown> };
}

/** The call as the engine runs it (and parks it when the upstream asks something). */
export function syncCall(deps: TasksExtensionDeps, call: ModernCall, caller: UpstreamCaller, maxDurationMs?: number): TaskCall {
  const task: TaskCall = {
    caller,
    upstream: deps.upstream.name,
    client: call.client,
    principal: call.principal,
    taskProtocol: "extension",
    request: withoutMrtrFields(call.upstreamRequest),
    ttlMs: Math.min(deps.tasks.defaultTtlMs, deps.tasks.maxTtlMs),
    pollIntervalMs: deps.tasks.pollIntervalMs,
  };
  if (maxDurationMs !== undefined) task.maxDurationMs = maxDurationMs;
  if (call.log) task.log = call.log;
  return task;
}

/**
 * Start `task`, or continue the round `retry` names, and answer with what comes next: the
 * request's own result, a task (tools/call only), or another round.
 */
export function runRound(
  deps: TasksExtensionDeps,
  call: ModernCall,
  front: ModernFront,
  target: CallTarget,
  retry: Retry | undefined,
  task: TaskCall,
  options: SyncOptions,
): Promise<Response> {
  const reply = new CallReply(call.accepts, front.keepAliveMs);
  const outcome = retry
    ? deps.engine.sync.resume(retry.ticket, call.principal, call.request.id, retry.responses, options)
    : deps.engine.sync.start(task, target, noServerRequests(reply), options);
  // One reaction for both: a `.then().catch()` costs a promise more on every call.
  const failed = (err: unknown) => storeFailure(call.request, err);
  const work = outcome.then((o) => {
    try {
      return renderOutcome(deps, call.request, front, o);
    } catch (err) {
      return failed(err);
    }
  }, failed);
  return reply.respond(work);
}

function renderOutcome(deps: TasksExtensionDeps, request: JsonRpcRequest, front: ModernFront, outcome: SyncOutcome | undefined): JsonRpcResponse {
  if (outcome === undefined)
    return failure(request.id, { code: RPC.INVALID_PARAMS, message: "Invalid params: requestState has expired (the parked call is gone)" });
  if ("inline" in outcome) return front.shape(request, outcome.inline);
  if ("task" in outcome) return success(request.id, createTaskResult(outcome.task));
  const { inputRequests, ticket } = outcome.input;
  const result = { resultType: "input_required", inputRequests, requestState: deps.requestState.sign(ticket) };
  return front.shape(request, success(request.id, result));
}

function storeFailure(request: JsonRpcRequest, err: unknown): JsonRpcResponse {
  return wireError(err).toBody(request.id);
}

/** MRTR fields are taskgate's to read, never the legacy upstream's. */
function withoutMrtrFields(request: JsonRpcRequest): JsonRpcRequest {
  const params = request.params;
  if (!params || !(Object.hasOwn(params, "inputResponses") || Object.hasOwn(params, "requestState"))) return request;
  return withFields(request, { params: copyWithout(params, "inputResponses", "requestState") });
}
