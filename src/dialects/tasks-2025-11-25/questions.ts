import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import type { TaskRecord } from "../../store/contract.js";
import { RELATED_TASK } from "./render.js";

/**
 * Where a question was sent: the `tasks/result` stream (id `tgi:<taskId>:<key>`) or the session's
 * GET stream (the same id with `:get`), so one question sent on both never has one id twice.
 */
export type QuestionStream = "result" | "get";

/** `tgi:<taskId>:<key>` or `tgi:<taskId>:<key>:get`: the answer finds its task on any replica. */
const QUESTION_ID = /^tgi:([^:]+):([^:]+)(?::get)?$/;

/**
 * The upstream's questions still waiting for the client, as requests with the related-task
 * `_meta` (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#input-required-status):
 * those not answered already (an answer waiting for the owner counts as one), not yet sent on
 * this stream (`asked`, updated) and that `claim` gives to it (see SessionNotices).
 */
export function questionsToSend(task: TaskRecord, asked: Set<string>, stream: QuestionStream, claim: (key: string) => boolean): JsonRpcRequest[] {
  if (task.status !== "input_required") return [];
  const out: JsonRpcRequest[] = [];
  for (const [key, input] of Object.entries(task.inputRequests)) {
    if (asked.has(key) || key in task.inputResponses || !claim(key)) continue;
    asked.add(key);
    const params = { ...input.params, _meta: { ...(input.params?._meta as object | undefined), [RELATED_TASK]: { taskId: task.id } } };
    out.push({ jsonrpc: "2.0", id: `tgi:${task.id}:${key}${stream === "get" ? ":get" : ""}`, method: input.method, params });
  }
  return out;
}

/** The task and question key a client's response answers, from its id; undefined when it answers none of taskgate's questions. */
export function questionOf(id: unknown): { taskId: string; key: string } | undefined {
  const match = typeof id === "string" ? QUESTION_ID.exec(id) : null;
  return match ? { taskId: match[1]!, key: match[2]! } : undefined;
}
