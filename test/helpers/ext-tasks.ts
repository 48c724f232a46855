import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
  type ApplicationElicitResult,
} from "@modelcontextprotocol/ext-tasks/client";

export interface ExtTasksRun {
  /** The messages of the questions the client was asked, in order. */
  asked: string[];
  /** The related-task ids the questions carried. */
  relatedTaskIds: Array<string | undefined>;
  result: unknown;
  taskIds: string[];
}

/**
 * A client built on `@modelcontextprotocol/ext-tasks` 0.2.x over the SDK 2.x `Client`, as a
 * host such as the MCP Inspector v2 runs it: it polls `tasks/get` to a terminal status and
 * answers the questions that reach it on any stream.
 */
export async function callWithExtTasks(
  mcpUrl: string,
  tool: string,
  args: Record<string, unknown>,
  answer: (message: string) => ApplicationElicitResult,
): Promise<ExtTasksRun> {
  const client = new Client({ name: "taskgate-ext-tasks-test", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  const run: ExtTasksRun = { asked: [], relatedTaskIds: [], result: undefined, taskIds: [] };
  try {
    const { tools } = await client.listTools();
    const declarations = new Map(tools.map((t) => [t.name, toolDeclarationFromMcpTool(t)]));
    const session = createTaskSessionFromClient(client, {
      endpointId: "taskgate-test",
      tools: { currentTool: (name: string) => declarations.get(name) },
      onInputRequest: async (request, context) => {
        if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind} request`);
        const message = String(request.params.message);
        run.asked.push(message);
        run.relatedTaskIds.push(context.taskId);
        return answer(message) as never;
      },
    });
    try {
      const execution = await session.callTool(tool, args as never);
      const { outcome } = await execution.settle({
        onEvent: (event) => {
          if (event.type === "task" && !run.taskIds.includes(event.task.taskId)) run.taskIds.push(event.task.taskId);
        },
      });
      run.result = resultFromTaskOutcome(outcome);
    } finally {
      await session.close();
    }
  } finally {
    await client.close();
  }
  return run;
}
