import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, Server, type Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import { delay } from "../tools/pause.js";
import { detailed, type TaskBook, type DemoTask } from "./task-book.js";
import { MODERN_DEMO_INFO } from "./tools.js";

const TASKS = "io.modelcontextprotocol/tasks";
const TaskId = z.object({ taskId: z.string() }).passthrough();
const Update = z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() }).passthrough();
const Research = z.object({ topic: z.string(), seconds: z.number().nonnegative().max(3600).default(0.3) });

type Envelope = Record<string, unknown> | undefined;

/**
 * The 2026-07-28 demo with the `io.modelcontextprotocol/tasks` extension (`--tasks-extension`):
 * `research` runs as a task of the server's own for a caller that declared the extension, asks
 * its question through the task's `inputRequests` (answered with tasks/update) and puts its
 * result inline in tasks/get
 * (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
 * A caller without the extension gets -32021: the server cannot run it otherwise.
 */
export function createTaskDemoServer(book: TaskBook, log: (line: string) => void): Server {
  const server = new Server(MODERN_DEMO_INFO, { capabilities: { tools: {}, extensions: { [TASKS]: {} } } });
  server.setRequestHandler("tools/list", () => ({
    tools: <Tool[]>[
      {
        name: "echo",
        description: "Returns the text it was given.",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
      {
        name: "research",
        description: "Runs as a task of this server's own: asks how deep to go, then answers.",
        inputSchema: { type: "object", properties: { topic: { type: "string" }, seconds: { type: "number" } }, required: ["topic"] },
      },
    ],
  }));
  server.setRequestHandler("tools/call", (request, ctx) => {
    const args = request.params.arguments ?? {};
    if (request.params.name === "echo") return { content: [{ type: "text", text: String(args["text"] ?? "") }] };
    if (request.params.name !== "research") throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    if (!declaresTasks(ctx.mcpReq.envelope))
      throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS]: {} } } }, "research runs only as a task");
    const task = book.create();
    log(`task ${task.taskId} started`);
    void runResearch(book, task, Research.parse(args), log);
    // `content: []`: the SDK 2.x checks every tools/call result as a CallToolResult; the extension's result is the rest.
    return { resultType: "task", ...detailed(task), content: [] } as never;
  });
  const known = (taskId: string, envelope: Envelope): DemoTask => {
    if (!declaresTasks(envelope)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const task = book.get(taskId);
    if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
    return task;
  };
  server.setRequestHandler(
    "tasks/get",
    { params: TaskId },
    (params, ctx) => ({ resultType: "complete", ...detailed(known(params.taskId, ctx.mcpReq.envelope)) }) as never,
  );
  server.setRequestHandler("tasks/update", { params: Update }, (params, ctx) => {
    // The SDK lifts `inputResponses` out of every request's params, as it does for an MRTR retry.
    book.answer(known(params.taskId, ctx.mcpReq.envelope), params.inputResponses ?? ctx.mcpReq.inputResponses ?? {});
    return { resultType: "complete" } as never;
  });
  server.setRequestHandler("tasks/cancel", { params: TaskId }, (params, ctx) => {
    const task = known(params.taskId, ctx.mcpReq.envelope);
    if (!book.isTerminal(task)) log(`task ${task.taskId} cancelled`);
    book.update(task, { status: "cancelled", statusMessage: "Cancelled by the client" });
    task.wake?.();
    return { resultType: "complete" } as never;
  });
  return server;
}

/** Work a little, ask how deep to go, wait for the answer (tasks/update), work some more, answer. */
async function runResearch(book: TaskBook, task: DemoTask, args: z.infer<typeof Research>, log: (line: string) => void): Promise<void> {
  const never = new AbortController().signal;
  book.update(task, { statusMessage: `Reading about ${args.topic}` });
  await delay(50, never);
  const ask = {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: `How deep should the research on ${args.topic} go?`,
      requestedSchema: { type: "object", properties: { depth: { type: "string" } }, required: ["depth"] },
    },
  };
  book.update(task, { status: "input_required", inputRequests: { depth: ask } });
  while (task.answers["depth"] === undefined && !book.isTerminal(task)) await new Promise<void>((resolve) => (task.wake = resolve));
  if (book.isTerminal(task)) return;
  const answer = task.answers["depth"] as { action?: string; content?: { depth?: string } };
  book.update(task, { status: "working", statusMessage: "Writing it up" });
  await delay(args.seconds * 1000, never);
  const depth = answer.action === "accept" ? (answer.content?.depth ?? "?") : "none (declined)";
  book.update(task, { status: "completed", result: { content: [{ type: "text", text: `Research on ${args.topic} (depth: ${depth})` }], isError: false } });
  log(`task ${task.taskId} completed`);
}

function declaresTasks(envelope: Envelope): boolean {
  const caps = envelope?.["io.modelcontextprotocol/clientCapabilities"] as { extensions?: Record<string, unknown> } | undefined;
  return caps?.extensions?.[TASKS] !== undefined;
}
