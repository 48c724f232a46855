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

/**
 * The task as the status, cancel and answer tools show it (their outputSchema). Some hosts give
 * the model `structuredContent` instead of the text when both are there, so it says in words
 * where the task stands (`message`) and which calls come next with their arguments (`next`).
 */
export function taskStatus(task: TaskRecord, names: GatewayToolNames, message = statusLine(task, names)): Record<string, unknown> {
  // The same flat fields as the tasks extension's Task: one shape for a task wherever it is shown.
  const status = taskFields(task);
  const questions = pendingQuestions(task);
  if (questions.length > 0) status.questions = questions;
  status.message = message;
  status.next = nextCalls(task, names);
  return status;
}

/** One call a model can make next: the tool, its arguments as they are to be sent, and what it is for. */
export interface NextCall {
  tool: string;
  arguments: Record<string, unknown>;
  purpose: string;
}

/** The calls that make sense for a task in its state, in the order a model would make them. */
export function nextCalls(task: TaskRecord, names: GatewayToolNames): NextCall[] {
  const taskId = task.id;
  const wait = `wait ${seconds(task.pollIntervalMs)} s between checks`;
  switch (task.status) {
    case "working":
      return [
        { tool: names.status, arguments: { taskId }, purpose: `Shows its progress and any question it asks; ${wait}.` },
        { tool: names.result, arguments: { taskId }, purpose: "Gives the tool's result once the task is completed." },
        { tool: names.cancel, arguments: { taskId }, purpose: "Stops it, if it is no longer wanted." },
      ];
    case "input_required":
      return [
        ...pendingQuestions(task).map((q) => ({
          tool: names.answer,
          arguments: { taskId, key: q.key, response: q.method === "elicitation/create" ? { action: "accept", content: {} } : {} },
          purpose:
            q.method === "elicitation/create"
              ? `Answers question ${q.key}${typeof q.params?.message === "string" ? ` ("${q.params.message}")` : ""}: put the fields it asks for in response.content, or send {"action":"decline"}.`
              : `Answers question ${q.key} (${q.method}) with the result that method expects.`,
        })),
        { tool: names.cancel, arguments: { taskId }, purpose: "Stops it instead." },
      ];
    case "completed":
      return [{ tool: names.result, arguments: { taskId }, purpose: "Gives the tool's result." }];
    default:
      return [];
  }
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
  // structuredContent says all the text says, for hosts that give the model only that field.
  return toolResult(text, {
    taskId: task.id,
    status: task.status,
    message: text,
    pollIntervalMs: task.pollIntervalMs,
    next: nextCalls(task, names),
    followWith: { ...names },
  });
}
