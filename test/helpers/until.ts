import { modern, WITH_TASKS } from "./modern.js";
import { StopWaiting, waitFor } from "./wait-for.js";

export const TERMINAL = ["completed", "failed", "cancelled"];

export interface UntilOptions {
  /** Sent with every tasks/get (credentials). */
  headers?: Record<string, string>;
  timeoutMs?: number;
  what?: string;
}

/**
 * Poll tasks/get (the tasks extension) until `accept(task)` says yes, asking the gateways of `urls` in turn
 * (any replica must answer alike). The one polling loop the task tests share.
 */
export async function untilTask(urls: string | readonly string[], taskId: string, accept: (task: any) => boolean, options: UntilOptions = {}) {
  const list = typeof urls === "string" ? [urls] : urls;
  let turn = 0;
  return waitFor(
    async () => {
      const url = list[turn++ % list.length]!;
      const reply = await modern(url, "tasks/get", { taskId }, { capabilities: WITH_TASKS, ...(options.headers ? { headers: options.headers } : {}) }).catch(
        () => undefined,
      );
      const task = reply?.body?.result;
      return task && accept(task) ? task : undefined;
    },
    { timeoutMs: options.timeoutMs ?? 15_000, intervalMs: 100, what: `task ${taskId} to reach ${options.what ?? "a state"}` },
  );
}

/** Until the task is `status` and `check` holds; a task that ends in another status fails at once. */
export async function untilStatus(
  urls: string | readonly string[],
  taskId: string,
  status: string,
  options: UntilOptions & { check?: (task: any) => boolean } = {},
) {
  const { check = () => true, ...rest } = options;
  return untilTask(
    urls,
    taskId,
    (task) => {
      if (TERMINAL.includes(task.status) && task.status !== status) throw new StopWaiting(`it ended ${JSON.stringify(task)}`);
      return task.status === status && check(task);
    },
    { what: status, ...rest },
  );
}

/** Until the task is terminal, whichever way it ended. */
export const untilEnded = (urls: string | readonly string[], taskId: string, options: UntilOptions = {}) =>
  untilTask(urls, taskId, (t) => TERMINAL.includes(t.status), { what: "a terminal status", ...options });
