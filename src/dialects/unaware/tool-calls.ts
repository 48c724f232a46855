import type { TaskRecord } from "../../store/contract.js";
import type { TaskEngine } from "../../tasks/engine.js";
import { isTerminal } from "../../tasks/transitions.js";
import { checkInputSize } from "../input-size.js";
import type { GatewayToolKind, GatewayToolNames } from "./gateway-tools.js";
import { pendingQuestions, seconds, statusLine, taskStatus, toolResult } from "./render.js";

export interface GatewayToolDeps {
  engine: TaskEngine;
  names: GatewayToolNames;
  /** limits.maxInputResponsesBytes, as for tasks/update. */
  maxInputResponsesBytes: number;
}

type Args = Record<string, unknown>;

/**
 * One call of a gateway tool, as the CallToolResult it answers with. Every lookup is bound to
 * the caller's principal exactly as tasks/get is: another principal's task reads like an unknown
 * one. A mistake the model can fix (no taskId, unknown task, nothing to answer) is a tool error
 * (`isError`), which the model sees, rather than a protocol error.
 */
export async function callGatewayTool(deps: GatewayToolDeps, kind: GatewayToolKind, principal: string, args: Args): Promise<Record<string, unknown>> {
  const taskId = args.taskId;
  if (typeof taskId !== "string" || taskId.length === 0) return toolResult("taskId (a string) is required.", undefined, true);
  switch (kind) {
    case "status":
      return withTask(await deps.engine.get(taskId, principal), taskId, (task) => {
        const line = statusLine(task, deps.names);
        return toolResult(line, taskStatus(task, deps.names, line));
      });
    case "result":
      return withTask(await deps.engine.get(taskId, principal), taskId, (task) => resultOf(task, deps.names));
    case "cancel":
      return withTask(await deps.engine.requestCancel(taskId, principal), taskId, (task) => {
        const line = isTerminal(task.status)
          ? statusLine(task, deps.names)
          : `Cancellation of task ${task.id} requested; ${deps.names.status} shows when it stopped.`;
        return toolResult(line, taskStatus(task, deps.names, line));
      });
    case "answer":
      return answer(deps, taskId, principal, args);
  }
}

function withTask(task: TaskRecord | undefined, taskId: string, render: (task: TaskRecord) => Record<string, unknown>): Record<string, unknown> {
  return task ? render(task) : toolResult(`No task ${taskId.slice(0, 100)} (unknown, expired, or not yours).`, undefined, true);
}

/** The upstream's own result once completed; its error as a tool error once failed; else where it stands. */
function resultOf(task: TaskRecord, names: GatewayToolNames): Record<string, unknown> {
  const outcome = task.outcome;
  if (task.status === "completed" && outcome && "result" in outcome) return outcome.result;
  if (task.status === "failed") {
    const error = outcome && "error" in outcome ? outcome.error.message : (task.statusMessage ?? "the call failed");
    return toolResult(`Task ${task.id} failed: ${error}`, undefined, true);
  }
  if (task.status === "cancelled") return toolResult(`Task ${task.id} was cancelled; it has no result.`, undefined, true);
  const wait = task.status === "working" ? ` Still running: check again in ${seconds(task.pollIntervalMs)} s.` : "";
  return toolResult(`${statusLine(task, names)}${wait}`);
}

/** The answer, written and routed exactly as tasks/update writes and routes it (the engine's input bridge). */
async function answer(deps: GatewayToolDeps, taskId: string, principal: string, args: Args): Promise<Record<string, unknown>> {
  const response = args.response;
  if (typeof response !== "object" || response === null || Array.isArray(response)) return toolResult("response (an object) is required.", undefined, true);
  const task = await deps.engine.get(taskId, principal);
  if (!task) return withTask(undefined, taskId, () => ({}));
  const open = pendingQuestions(task);
  const key = typeof args.key === "string" ? args.key : open.length === 1 ? open[0]!.key : undefined;
  const question = open.find((q) => q.key === key);
  if (!question) {
    const why = open.length === 0 ? `it asks nothing now (status ${task.status})` : `name the question with key: one of ${open.map((q) => q.key).join(", ")}`;
    const line = `Task ${task.id} was not answered: ${why}.`;
    return toolResult(line, taskStatus(task, deps.names, line), true);
  }
  const value = question.method === "elicitation/create" && !("action" in response) ? { action: "accept", content: response } : response;
  checkInputSize(value, deps.maxInputResponsesBytes);
  const after = await deps.engine.answer(taskId, principal, { [question.key]: value });
  if (!after) return withTask(undefined, taskId, () => ({}));
  const line = `Answer delivered to task ${task.id}; it goes on. Follow it with ${deps.names.status}.`;
  return toolResult(line, taskStatus(after, deps.names, line));
}
