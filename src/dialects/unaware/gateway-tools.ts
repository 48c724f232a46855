import type { Config } from "../../config/schema.js";

/** The configured names of the four gateway tools (tasks.gatewayTools). */
export type GatewayToolNames = Config["tasks"]["gatewayTools"];
export type GatewayToolKind = keyof GatewayToolNames;

const TASK_ID = { type: "string", description: "The task id a long call answered with (taskgate's detached result)." };

/** What taskgate_status (and cancel, answer) return as structuredContent. */
const TASK_STATUS_SCHEMA = {
  type: "object",
  properties: {
    taskId: { type: "string" },
    status: { type: "string", enum: ["working", "input_required", "completed", "failed", "cancelled"] },
    statusMessage: { type: "string", description: 'The upstream\'s latest progress, e.g. "Slept 2/5 s".' },
    createdAt: { type: "string", description: "ISO 8601." },
    lastUpdatedAt: { type: "string", description: "ISO 8601." },
    ttlMs: { type: "integer", description: "The task and its result are kept this long from creation." },
    pollIntervalMs: { type: "integer", description: "How long to wait before checking again." },
    message: { type: "string", description: "Where the task stands and what to do next, in words (the same as the text)." },
    next: {
      type: "array",
      description: "The calls to make next, in order: call `tool` with exactly `arguments` (fill in an answer's response).",
      items: {
        type: "object",
        properties: { tool: { type: "string" }, arguments: { type: "object" }, purpose: { type: "string" } },
        required: ["tool", "arguments", "purpose"],
      },
    },
    questions: {
      type: "array",
      description: "What the running tool asks (status input_required); answer each with the answer tool.",
      items: {
        type: "object",
        properties: { key: { type: "string" }, method: { type: "string" }, params: { type: "object" } },
        required: ["key", "method"],
      },
    },
  },
  required: ["taskId", "status", "pollIntervalMs", "message", "next"],
} as const;

const taskIdOnly = { type: "object", properties: { taskId: TASK_ID }, required: ["taskId"], additionalProperties: false } as const;

/**
 * The tools a task-unaware caller sees in handle mode, in the shape of the MCP Tool
 * (tools/list). The result tool has no outputSchema: it returns the upstream tool's own result,
 * whose structuredContent follows that tool's schema, not one of taskgate's.
 */
export function gatewayTools(names: GatewayToolNames): Array<Record<string, unknown>> {
  return [
    {
      name: names.status,
      title: "Task status",
      description: `Progress of a long tool call that continues in the background, and any question it asks. Call with the taskId that call answered with; when status is input_required, answer with ${names.answer}; once completed, get the result with ${names.result}.`,
      inputSchema: taskIdOnly,
      outputSchema: TASK_STATUS_SCHEMA,
      annotations: { title: "Task status", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: names.result,
      title: "Task result",
      description: `The result of a long tool call that continued in the background: exactly what the tool returned, once it is done. While it still runs, says so and when to check again.`,
      inputSchema: taskIdOnly,
      annotations: { title: "Task result", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: names.cancel,
      title: "Cancel task",
      description: "Asks a long tool call running in the background to stop. The tool may still finish first.",
      inputSchema: taskIdOnly,
      outputSchema: TASK_STATUS_SCHEMA,
      annotations: { title: "Cancel task", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: names.answer,
      title: "Answer task question",
      description: `Answers the question a background tool call asks (shown by ${names.status}). For a confirmation or form (elicitation/create) give response {"action":"accept","content":{...the fields asked for...}} (or "decline" / "cancel"); a bare object of fields counts as accept. key: which question, needed only when several wait.`,
      inputSchema: {
        type: "object",
        properties: {
          taskId: TASK_ID,
          response: { type: "object", description: "The answer, as the question's method expects its result." },
          key: { type: "string", description: "The question's key from the status tool; optional when only one question waits." },
        },
        required: ["taskId", "response"],
        additionalProperties: false,
      },
      outputSchema: TASK_STATUS_SCHEMA,
      annotations: { title: "Answer task question", readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
  ];
}

/** Which gateway tool a name is, if any. */
export function gatewayToolKind(names: GatewayToolNames, name: string): GatewayToolKind | undefined {
  for (const kind of Object.keys(names) as GatewayToolKind[]) if (names[kind] === name) return kind;
  return undefined;
}
