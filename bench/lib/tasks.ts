import { modernRequest, rpc, WITH_TASKS } from "./mcp.js";
import { waitFor } from "./wait.js";

/** Dialect B task handles and polling, on the 2026-07-28 wire with the tasks extension declared. */

export async function callTool(url: string, name: string, args: Record<string, unknown>, id: string): Promise<any> {
  const { status, message } = await rpc(url, modernRequest("tools/call", name, { name, arguments: args }, WITH_TASKS, id));
  if (!message) throw new Error(`tools/call ${name} answered ${status} with no JSON-RPC response`);
  if (message.error) throw new Error(`tools/call ${name} answered ${status}: ${message.error.code} ${message.error.message}`);
  return message.result;
}

/** A task created at once (the tool is `taskSupport: required`); resolves with its id. */
export async function createTask(url: string, name: string, args: Record<string, unknown>, id: string): Promise<string> {
  const result = await callTool(url, name, args, id);
  if (result?.resultType !== "task" || typeof result.taskId !== "string")
    throw new Error(`tools/call ${name} did not make a task: ${JSON.stringify(result).slice(0, 300)}`);
  return result.taskId;
}

export async function getTask(url: string, taskId: string): Promise<any> {
  const { status, message } = await rpc(url, modernRequest("tasks/get", taskId, { taskId }, WITH_TASKS, `get-${taskId}`));
  if (!message || message.error) throw new Error(`tasks/get answered ${status}: ${JSON.stringify(message?.error ?? message)}`);
  return message.result;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Poll until the task ends; resolves with its final status. */
export async function untilEnded(url: string, taskId: string, timeoutMs = 20_000, intervalMs = 20): Promise<string> {
  return waitFor(
    async () => {
      const task = await getTask(url, taskId);
      return TERMINAL.has(task.status) ? (task.status as string) : undefined;
    },
    `task ${taskId} to end`,
    timeoutMs,
    intervalMs,
  );
}
