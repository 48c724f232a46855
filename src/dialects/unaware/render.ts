import type { TaskRecord } from "../../store/contract.js";
import { taskFields } from "../tasks-extension/render.js";
import type { GatewayToolNames } from "./gateway-tools.js";

/** A CallToolResult carrying text and, where given, structuredContent (MCP tools: structured content). */
export function toolResult(text: string, structured?: Record<string, unknown>, isError = false): Record<string, unknown> {
  return {
    content: [{ type: "text", text }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(isError ? { isError: true } : {}),
  };
}

/** The task as the status, cancel and answer tools show it (their outputSchema). */
export function taskStatus(task: TaskRecord): Record<string, unknown> {
  // The same flat fields as the tasks extension's Task: one shape for a task wherever it is shown.
  const status = taskFields(task);
  const questions = pendingQuestions(task);
  if (questions.length > 0) status.questions = questions;
  return status;
}

/** Questions the upstream asked that no answer was written for yet. */
export function pendingQuestions(task: TaskRecord): Array<{ key: string; method: string; params?: Record<string, unknown> }> {
  if (task.status !== "input_required") return [];
  return Object.entries(task.inputRequests)
    .filter(([key]) => !Object.hasOwn(task.inputResponses, key))
    .map(([key, request]) => ({ key, ...request }));
}

export function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** One sentence on where a task stands, for the text of every gateway tool's answer. */
export function statusLine(task: TaskRecord, names: GatewayToolNames): string {
  const progress = task.statusMessage ? ` (${task.statusMessage})` : "";
  switch (task.status) {
    case "working":
      return `Task ${task.id} is still running${progress}. Check again in ${seconds(task.pollIntervalMs)} s with ${names.status}; ${names.result} gives the result once it is done.`;
    case "input_required":
      return `Task ${task.id} waits for an answer: ${questionsText(task)} Answer with ${names.answer} (taskId, response).`;
    case "completed":
      return `Task ${task.id} is done. Get its result with ${names.result}.`;
    default:
      return `Task ${task.id} ended ${task.status}${progress}.`;
  }
}

function questionsText(task: TaskRecord): string {
  return pendingQuestions(task)
    .map((q) => {
      const message = typeof q.params?.message === "string" ? `"${q.params.message}"` : q.method;
      return `[${q.key}] ${message}`;
    })
    .join("; ");
}

/**
 * What a task-unaware caller gets when its call detached: an ordinary CallToolResult,
 * not an error, saying the work goes on and naming the tools that follow it.
 */
export function detachedResult(task: TaskRecord, tool: string, names: GatewayToolNames, asking = false): Record<string, unknown> {
  const asks = asking || task.status === "input_required" ? ` It asks a question first: ${names.status} shows it, ${names.answer} answers it.` : "";
  const text =
    `"${tool}" is still running in the background as task ${task.id}.${asks} ` +
    `Call ${names.status} with {"taskId":"${task.id}"} for its progress and ${names.result} with the same taskId for its result ` +
    `(check again in ${seconds(task.pollIntervalMs)} s); ${names.cancel} stops it.`;
  return toolResult(text, {
    taskId: task.id,
    status: task.status,
    message: "The call continues in the background; follow it with the tools named here.",
    pollIntervalMs: task.pollIntervalMs,
    followWith: { ...names },
  });
}
