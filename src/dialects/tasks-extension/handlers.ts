import { GatewayError, storeCall } from "../../wire/errors.js";
import { success, type JsonRpcMessage } from "../../jsonrpc/message.js";
import type { MessageHandler, ModernCall, MethodHandler } from "../modern/modern-front.js";
import { declaresTasks, TASKS_EXTENSION } from "../modern/wire.js";
import { checkInputSize } from "../input-size.js";
import { REQUIRED_CAPABILITIES, type TasksExtensionDeps } from "./deps.js";
import { listen } from "./listen.js";
import { getTaskResult } from "./render.js";
import { promptOrResource } from "./prompt-or-resource.js";
import { toolsCall } from "./tools-call.js";
import { listModern } from "../unaware/modern.js";
import { found, present, taskIdOf } from "../task-lookup.js";

export type { TasksExtensionDeps } from "./deps.js";

/**
 * The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the modern wire: tools/call, tasks/*,
 * task notifications, and the MRTR rounds of prompts/get and resources/read.
 */
export function tasksExtensionHandlers(deps: TasksExtensionDeps): Map<string, MethodHandler | MessageHandler> {
  const getPrompt = promptOrResource("prompts/get");
  const readResource = promptOrResource("resources/read");
  return new Map<string, MethodHandler | MessageHandler>([
    ["tools/call", (call, front) => toolsCall(deps, call, front)],
    [
      "tools/list",
      (call, front) =>
        deps.unaware?.active && !declaresTasks(call.client.capabilities) ? listModern(deps.unaware, deps.relay, call, front) : front.passthrough(call),
    ],
    ["prompts/get", (call, front) => getPrompt(deps, call, front)],
    ["resources/read", (call, front) => readResource(deps, call, front)],
    // The poll: one `then` per step it must take (each promise costs every poll).
    [
      "tasks/get",
      { answer: (call) => withTask(call, (id) => deps.engine.view(id, call.principal, true, call.log).then((task) => getTaskResult(present(task)))) },
    ],
    [
      "tasks/cancel",
      { answer: (call) => withTask(call, async (id) => (await found(deps.engine.requestCancel(id, call.principal, call.log)), { resultType: "complete" })) },
    ],
    ["tasks/update", { answer: (call) => withTask(call, (id) => update(deps, id, call)) }],
    ["subscriptions/listen", (call, front) => listen(deps, call, front)],
  ]);
}

async function update(deps: TasksExtensionDeps, taskId: string, { request, principal, log }: ModernCall): Promise<Record<string, unknown>> {
  const responses = request.params?.inputResponses;
  if (typeof responses !== "object" || responses === null || Array.isArray(responses))
    throw new GatewayError("invalid_params", "params.inputResponses must be an object");
  checkInputSize(responses, deps.maxInputResponsesBytes);
  await found(deps.engine.answer(taskId, principal, responses as Record<string, unknown>, log));
  return { resultType: "complete" };
}

/** Every tasks/* request must itself declare the extension (the tasks extension, https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md), and name a task. */
function withTask(call: ModernCall, op: (taskId: string) => Promise<Record<string, unknown>>): Promise<JsonRpcMessage> {
  if (!declaresTasks(call.client.capabilities))
    throw new GatewayError("missing_capability", `${call.request.method} needs the ${TASKS_EXTENSION} extension declared`, REQUIRED_CAPABILITIES);
  const taskId = taskIdOf(call.request);
  return storeCall(
    () => op(taskId),
    (result) => success(call.request.id, result),
  );
}
