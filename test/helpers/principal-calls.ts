import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { as } from "./auth.js";
import { textOf } from "./mcp-client.js";
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

/**
 * The SDK 1.x client on a 2025-11-25 session, as `principal`, making a plain call of `tool` (one
 * that asks `question`) and answering whatever it is asked with the principal's own words:
 * elicitation, sampling (its text), roots (a folder named after the principal).
 */
export async function askingSdkCall(url: string, principal: string, tag: string, tool: string, args: Record<string, unknown> = {}) {
  const seen: string[] = [];
  const client = new Client({ name: `sdk-${principal}`, version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.push(req.params.message);
    return { action: "accept", content: { answer: `${principal}-${tag}` } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages[0]?.content;
    seen.push(first && "text" in first ? String(first.text) : "?");
    return { role: "assistant", model: "test", content: { type: "text", text: `${principal}-${tag}` } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.push("roots");
    return { roots: [{ uri: `file:///home/${principal}/${tag.replaceAll(" ", "-")}` }] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: as(principal) } }));
  try {
    const result = await client.callTool({ name: tool, arguments: { question: `Question for ${principal} ${tag}?`, ...args } });
    return { questions: seen, status: "completed", text: textOf(result) };
  } finally {
    await client.close();
  }
}
