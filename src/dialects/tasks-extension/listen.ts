import { GatewayError, storeCall } from "../../wire/errors.js";
import { SseStream } from "../../wire/sse.js";
import type { JsonRpcId } from "../../jsonrpc/message.js";
import type { TaskRecord } from "../../store/contract.js";
import type { ModernCall, ModernFront } from "../modern/modern-front.js";
import { declaresTasks, TASKS_EXTENSION } from "../modern/wire.js";
import { REQUIRED_CAPABILITIES, type TasksExtensionDeps } from "./deps.js";
import { detailedTask } from "./render.js";
import type { ListKind } from "../../upstream/mux/list-changed.js";

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
/** Input is bounded: one stream follows at most this many tasks. */
const MAX_TASK_IDS = 100;

/**
 * `subscriptions/listen` (2026-07-28 core, https://modelcontextprotocol.io/specification/2026-07-28;
 * tasks: https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md): an SSE stream that first acknowledges what it will carry, then pushes it
 * until the client closes it. Every notification carries the subscription id (the listen request's
 * JSON-RPC id) in `_meta`.
 * - `taskIds`: only the caller's own are taken (unknown ones and another principal's, which read
 *   alike, are left out, as the ack allows); `notifications/tasks` with the full DetailedTask
 *   whenever it changes, from whichever replica owns the task (the store's hints, re-read each time).
 * - `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`: the upstream's list-changed
 *   notifications, for each list the upstream says it announces (`listChanged` in its capabilities);
 *   only the lists asked for.
 * Other filters are not served: the ack names none of them.
 */
export async function listen(deps: TasksExtensionDeps, call: ModernCall, front: ModernFront): Promise<Response> {
  const notifications = call.request.params?.notifications;
  const requested = taskIdsOf(notifications);
  const lists = listsOf(notifications, deps.relay.connector.initializeResult()?.capabilities ?? {});
  if (requested !== undefined && !declaresTasks(call.client.capabilities))
    throw new GatewayError("missing_capability", `task notifications need the ${TASKS_EXTENSION} extension declared`, REQUIRED_CAPABILITIES);
  if (!call.accepts.sse) throw new GatewayError("not_acceptable", "subscriptions/listen answers with text/event-stream");
  const found = await storeCall(() => Promise.all((requested ?? []).map((id) => deps.engine.get(id, call.principal, call.log))));
  const tasks = found.filter((t): t is TaskRecord => t !== undefined);
  const subscriptionId = call.request.id;
  const stream = new SseStream(front.keepAliveMs);
  const acknowledged = {
    ...(requested === undefined ? {} : { taskIds: tasks.map((t) => t.id) }),
    ...Object.fromEntries(lists.map((k) => [LIST_FILTER[k], true])),
  };
  stream.send({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: { _meta: meta(subscriptionId), notifications: acknowledged } });
  const closed = new AbortController();
  stream.onClose(() => closed.abort());
  for (const task of tasks) void push(deps, task.id, call.principal, subscriptionId, stream, closed.signal);
  if (lists.length > 0) {
    const stop = deps.relay.listChanged.on((kind, message) => {
      if (lists.includes(kind)) stream.send({ jsonrpc: "2.0", method: message.method, params: { _meta: meta(subscriptionId) } });
    });
    stream.onClose(stop);
  }
  return stream.response();
}

const LIST_FILTER: Record<ListKind, string> = { tools: "toolsListChanged", prompts: "promptsListChanged", resources: "resourcesListChanged" };

/** The lists asked for (`<list>ListChanged: true`) that the upstream announces changes of. */
function listsOf(notifications: unknown, upstreamCapabilities: Record<string, unknown>): ListKind[] {
  if (typeof notifications !== "object" || notifications === null || Array.isArray(notifications)) return [];
  const asked = notifications as Record<string, unknown>;
  return (Object.keys(LIST_FILTER) as ListKind[]).filter((kind) => {
    const flag = asked[LIST_FILTER[kind]];
    if (flag !== undefined && typeof flag !== "boolean")
      throw new GatewayError("invalid_params", `params.notifications.${LIST_FILTER[kind]} must be a boolean`);
    const capability = upstreamCapabilities[kind];
    return flag === true && typeof capability === "object" && capability !== null && (capability as Record<string, unknown>).listChanged === true;
  });
}

/** Each change of one task, as the DetailedTask tasks/get would give at that moment (no resultType). */
async function push(
  deps: TasksExtensionDeps,
  taskId: string,
  principal: string,
  subscriptionId: JsonRpcId,
  stream: SseStream,
  signal: AbortSignal,
): Promise<void> {
  let last = "";
  const send = (task: TaskRecord) => {
    const params = detailedTask(task);
    const shown = JSON.stringify(params);
    // A revision the client cannot see (e.g. an answer written, not yet taken) is not news.
    if (shown === last) return;
    last = shown;
    stream.send({ jsonrpc: "2.0", method: "notifications/tasks", params: { _meta: meta(subscriptionId), ...params } });
  };
  await deps.engine.follow(taskId, principal, send, signal).catch(() => undefined);
}

function meta(subscriptionId: JsonRpcId): Record<string, unknown> {
  return { [SUBSCRIPTION_ID]: subscriptionId };
}

/** `notifications.taskIds`: absent, or a list of task ids (deduplicated, bounded). */
function taskIdsOf(notifications: unknown): string[] | undefined {
  if (notifications === undefined) return undefined;
  if (typeof notifications !== "object" || notifications === null || Array.isArray(notifications))
    throw new GatewayError("invalid_params", "params.notifications must be an object");
  const ids = (notifications as Record<string, unknown>).taskIds;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string" && id.length > 0 && id.length <= 200))
    throw new GatewayError("invalid_params", "params.notifications.taskIds must be a list of task ids");
  if (ids.length > MAX_TASK_IDS) throw new GatewayError("invalid_params", `at most ${MAX_TASK_IDS} taskIds per subscription`);
  return [...new Set(ids as string[])];
}
