import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { CreateTaskRequestHandlerExtra, ToolTaskHandler } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { ShapeOutput, ZodRawShapeCompat } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { DEMO_SERVER_INFO } from "../create-server.js";
import { NativeWork } from "./work.js";

/** One task store and message queue per process: the SDK binds each task to the session that made it. */
export interface NativeState {
  store: InMemoryTaskStore;
  queue: InMemoryTaskMessageQueue;
}

export function nativeState(): NativeState {
  return { store: new InMemoryTaskStore(), queue: new InMemoryTaskMessageQueue() };
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const ms = z.number().int().nonnegative().max(600_000);

/**
 * The task-native demo server, written with the SDK 1.x's own task support
 * (`registerToolTask`; https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks):
 * `review` requires a task and asks a question mid-task; `crunch` requires a task and takes its
 * time in steps; `tally` allows a task (the SDK runs it to its end for a plain call); `echo` is
 * an ordinary tool.
 */
export function createNativeDemoServer(log: (line: string) => void, state: NativeState): McpServer {
  const server = new McpServer(DEMO_SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    instructions: "A task-native demo server: review (a task that asks for approval), crunch (a slow task), tally (a task if asked for one), echo.",
    taskStore: state.store,
    taskMessageQueue: state.queue,
  });
  const tasks = server.experimental.tasks;
  const review = { subject: z.string().min(1).describe("What to review."), ms: ms.default(200).describe("How long reading it takes.") };
  tasks.registerToolTask(
    "review",
    { description: "Reads the subject, asks the client to approve it mid-task, then answers.", inputSchema: review, execution: { taskSupport: "required" } },
    handler(log, "review", review, async (work, args) => {
      await work.status(`Reading ${args.subject}`);
      if (!(await work.pause(args.ms))) return text("cancelled");
      const answer = await work.ask({
        mode: "form",
        message: `Approve ${args.subject}?`,
        requestedSchema: { type: "object", properties: { approve: { type: "boolean", title: "Approve" } }, required: ["approve"] },
      });
      const approved = answer.action === "accept" && answer.content?.["approve"] === true;
      await work.status("Writing the verdict");
      return text(`${approved ? "approved" : "rejected"} ${args.subject}`);
    }),
  );
  const crunch = {
    ms: ms.describe("How long the whole job takes."),
    steps: z.number().int().min(1).max(1000).default(4).describe("Status updates along the way."),
  };
  tasks.registerToolTask(
    "crunch",
    {
      description: "Works for ms milliseconds in steps, telling each step in its statusMessage; stops when cancelled.",
      inputSchema: crunch,
      execution: { taskSupport: "required" },
    },
    handler(log, "crunch", crunch, (work, args) => steps(work, args, "crunched")),
  );
  tasks.registerToolTask(
    "tally",
    { description: "Like crunch, as a task only when the caller asks for one.", inputSchema: crunch, execution: { taskSupport: "optional" } },
    handler(log, "tally", crunch, (work, args) => steps(work, args, "tallied")),
  );
  server.registerTool("echo", { description: "Echoes text back at once.", inputSchema: { text: z.string() } }, ({ text: value }) => text(value));
  return server;
}

async function steps(work: NativeWork, args: { ms: number; steps: number }, done: string): Promise<CallToolResult> {
  for (let step = 1; step <= args.steps; step++) {
    await work.status(`Step ${step}/${args.steps}`);
    if (!(await work.pause(args.ms / args.steps))) return text("cancelled");
  }
  return text(`${done} in ${args.steps} steps`);
}

/** The SDK's three task handlers for one tool: make the task and run `body` on it; read it; read its result. */
function handler<S extends ZodRawShapeCompat>(
  log: (line: string) => void,
  tool: string,
  _shape: S,
  body: (work: NativeWork, args: ShapeOutput<S>) => Promise<CallToolResult>,
): ToolTaskHandler<S> {
  return {
    createTask: ((args: ShapeOutput<S>, extra: CreateTaskRequestHandlerExtra) =>
      NativeWork.start(tool, extra, log, (work) => body(work, args))) as ToolTaskHandler<S>["createTask"],
    getTask: ((_args: unknown, extra: { taskId: string; taskStore: CreateTaskRequestHandlerExtra["taskStore"] }) =>
      extra.taskStore.getTask(extra.taskId)) as ToolTaskHandler<S>["getTask"],
    getTaskResult: ((_args: unknown, extra: { taskId: string; taskStore: CreateTaskRequestHandlerExtra["taskStore"] }) =>
      extra.taskStore.getTaskResult(extra.taskId)) as ToolTaskHandler<S>["getTaskResult"],
  };
}
