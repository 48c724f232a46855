import type { Config, UpstreamConfig } from "../../config/schema.js";
import { GatewayError, storeCall } from "../../http/errors.js";
import { CallReply } from "../../http/reply.js";
import { failure, success, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { StoreUnavailableError } from "../../store/contract.js";
import type { TaskEngine } from "../../tasks/engine.js";
import { toolPolicy } from "../../tasks/policy.js";
import type { TaskCall } from "../../tasks/types.js";
import type { ModernCall, ModernFront, MethodHandler } from "../modern/modern-front.js";
import { noServerRequests } from "../modern/modern-front.js";
import { declaresTasks, TASKS_EXTENSION } from "../modern/wire.js";
import type { Relay } from "../passthrough/relay.js";
import { checkInputSize } from "../input-size.js";
import { createTaskResult, getTaskResult } from "./render.js";

export interface TasksBDeps {
  engine: TaskEngine;
  relay: Relay;
  upstream: UpstreamConfig;
  tasks: Config["tasks"];
  /** limits.maxInputResponsesBytes */
  maxInputResponsesBytes: number;
}

const REQUIRED_CAPABILITIES = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };

/** Dialect B (io.modelcontextprotocol/tasks, SEP-2663) on the modern wire: tools/call and tasks/*. */
export function tasksBHandlers(deps: TasksBDeps): Map<string, MethodHandler> {
  return new Map<string, MethodHandler>([
    ["tools/call", (call, front) => toolsCall(deps, call, front)],
    ["tasks/get", (call) => withTask(call, async (id) => getTaskResult(await found(deps.engine.get(id, call.principal))))],
    ["tasks/cancel", (call) => withTask(call, async (id) => (await found(deps.engine.requestCancel(id, call.principal)), { resultType: "complete" }))],
    ["tasks/update", (call) => withTask(call, (id) => update(deps, id, call.request, call.principal))],
  ]);
}

/** The decision table of design.md, dialect B rows (spec §3.2: the server alone decides). */
async function toolsCall(deps: TasksBDeps, call: ModernCall, front: ModernFront): Promise<Response> {
  const name = call.request.params?.name;
  if (typeof name !== "string") throw new GatewayError("invalid_params", "params.name must be a string");
  const policy = toolPolicy(deps.tasks, deps.upstream, name);
  const declared = declaresTasks(call.client.capabilities);
  if (!declared && policy.taskSupport === "required")
    throw new GatewayError("missing_capability", `tool '${name}' runs only as a task: declare ${TASKS_EXTENSION}`, REQUIRED_CAPABILITIES);
  if (!declared || policy.taskSupport === "forbidden") return front.passthrough(call);
  // Counted against the caller's task limit before anything starts, so a refusal is a clean 429.
  const task = await storeCall(() => deps.engine.admit(taskCall(deps, call, policy.maxDurationMs)));
  if (policy.taskSupport === "required") {
    const created = await storeCall(() => deps.engine.detachNow(task));
    return Response.json(success(call.request.id, createTaskResult(created)));
  }
  const reply = new CallReply(call.accepts, front.keepAliveMs);
  const work = deps.engine
    // 2026-07-28 has no server→client requests: a question before the call detached makes it a
    // task at once, and the question waits in inputRequests (MRTR rounds are not offered).
    .raceOrDetach(task, policy.detachAfterMs, noServerRequests(reply), { detachOnInput: true })
    .then((o) => ("inline" in o ? front.shape(call.request, o.inline) : success(call.request.id, createTaskResult(o.task))))
    .catch((err: unknown) => storeFailure(call.request, err));
  return reply.respond(work);
}

function taskCall(deps: TasksBDeps, call: ModernCall, maxDurationMs: number | undefined): TaskCall {
  const task: TaskCall = {
    caller: deps.relay,
    upstream: deps.upstream.name,
    client: call.client,
    principal: call.principal,
    dialect: "B",
    request: call.upstreamRequest,
    ttlMs: Math.min(deps.tasks.defaultTtlMs, deps.tasks.maxTtlMs),
    pollIntervalMs: deps.tasks.pollIntervalMs,
  };
  if (maxDurationMs !== undefined) task.maxDurationMs = maxDurationMs;
  return task;
}

async function update(deps: TasksBDeps, taskId: string, request: JsonRpcRequest, principal: string): Promise<Record<string, unknown>> {
  const responses = request.params?.inputResponses;
  if (typeof responses !== "object" || responses === null || Array.isArray(responses))
    throw new GatewayError("invalid_params", "params.inputResponses must be an object");
  checkInputSize(responses, deps.maxInputResponsesBytes);
  await found(deps.engine.answer(taskId, principal, responses as Record<string, unknown>));
  return { resultType: "complete" };
}

/** Every tasks/* request must itself declare the extension (§3.2), and name a task. */
async function withTask(call: ModernCall, op: (taskId: string) => Promise<Record<string, unknown>>): Promise<Response> {
  if (!declaresTasks(call.client.capabilities))
    throw new GatewayError("missing_capability", `${call.request.method} needs the ${TASKS_EXTENSION} extension declared`, REQUIRED_CAPABILITIES);
  const taskId = call.request.params?.taskId;
  if (typeof taskId !== "string" || taskId.length === 0) throw new GatewayError("invalid_params", "params.taskId must be a string");
  const result = await storeCall(() => op(taskId));
  return Response.json(success(call.request.id, result));
}

/** Unknown, expired and another principal's task: one answer, from one lookup. */
async function found<T>(value: Promise<T | undefined>): Promise<T> {
  const v = await value;
  if (v === undefined) throw new GatewayError("task_not_found");
  return v;
}

function storeFailure(request: JsonRpcRequest, err: unknown): JsonRpcResponse {
  const message = err instanceof StoreUnavailableError ? "task store unavailable" : "Internal error";
  return failure(request.id, { code: -32603, message });
}
