import { as } from "./auth.js";
import { modern, WITH_TASKS } from "./modern.js";
import { TERMINAL } from "./until.js";
import { waitFor } from "./wait-for.js";

/** Capabilities of a tasks-extension caller that also answers form elicitations. */
export const ELICIT_TASKS = { ...WITH_TASKS, elicitation: { form: {} } };

/** A 2026-07-28 request as `principal` (bearer auth, test/helpers/auth.ts). */
export function callAs(url: string, principal: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS) {
  return modern(url, method, params, { capabilities, headers: as(principal) });
}

/** Polls `principal`'s task until `done` says yes, with a deadline. */
export function untilTaskAs(url: string, principal: string, taskId: string, done: (task: any) => boolean, what: string) {
  return waitFor(
    async () => {
      const task = (await callAs(url, principal, "tasks/get", { taskId })).body.result;
      return task && done(task) ? task : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: `${what} (${taskId})` },
  );
}

/**
 * A task of the tasks extension calling `tool` (one that asks `question` by elicitation): waits for
 * its question, answers it with the principal's own words, and returns what it was asked and how it ended.
 */
export async function askingTask(url: string, principal: string, tag: string, tool: string) {
  const question = `Question for ${principal} ${tag}?`;
  const created = (await callAs(url, principal, "tools/call", { name: tool, arguments: { question } }, ELICIT_TASKS)).body.result;
  const waiting = await untilTaskAs(url, principal, created.taskId, (t) => t.status === "input_required" || TERMINAL.includes(t.status), "its question");
  const asked = Object.entries(waiting.inputRequests ?? {}) as Array<[string, any]>;
  const [key] = asked[0] ?? ["none"];
  await callAs(url, principal, "tasks/update", {
    taskId: created.taskId,
    inputResponses: { [key]: { action: "accept", content: { answer: `${principal}-${tag}` } } },
  });
  const done = await untilTaskAs(url, principal, created.taskId, (t) => TERMINAL.includes(t.status), "its end");
  return { questions: asked.map(([, r]) => r.params.message), status: done.status, text: done.result?.content?.[0]?.text };
}
