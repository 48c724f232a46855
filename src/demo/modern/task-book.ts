import { randomBytes } from "node:crypto";

export type DemoTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** One task the demo runs itself, as the tasks extension describes it (flat, `ttlMs`, outcome inline). */
export interface DemoTask {
  taskId: string;
  status: DemoTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  /** The answers tasks/update brought, by key, until the task takes them. */
  answers: Record<string, unknown>;
  wake?: () => void;
}

const TTL_MS = 10 * 60_000;
const POLL_INTERVAL_MS = 100;
const TERMINAL = new Set<DemoTaskStatus>(["completed", "failed", "cancelled"]);

/**
 * The demo's own tasks, in memory, shared by every request of the process (the server object
 * is made per request on the stateless wire). Ids are 128 random bits: a task id is a bearer
 * handle (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, security).
 */
export class TaskBook {
  private readonly tasks = new Map<string, DemoTask>();

  create(): DemoTask {
    const now = new Date().toISOString();
    const task: DemoTask = {
      taskId: randomBytes(16).toString("hex"),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: TTL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
      answers: {},
    };
    this.tasks.set(task.taskId, task);
    setTimeout(() => this.tasks.delete(task.taskId), TTL_MS).unref();
    return task;
  }

  get(taskId: string): DemoTask | undefined {
    return this.tasks.get(taskId);
  }

  /** A change of state; a terminal task never changes again. */
  update(task: DemoTask, change: Partial<Pick<DemoTask, "status" | "statusMessage" | "inputRequests" | "result">>): void {
    if (TERMINAL.has(task.status)) return;
    Object.assign(task, change, { lastUpdatedAt: new Date().toISOString() });
    if (change.status !== undefined && change.status !== "input_required") delete task.inputRequests;
  }

  /** What tasks/update brought: kept for the keys the task asked and has not had answered. */
  answer(task: DemoTask, responses: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(responses)) if (task.inputRequests && Object.hasOwn(task.inputRequests, key)) task.answers[key] = value;
    task.wake?.();
  }

  isTerminal(task: DemoTask): boolean {
    return TERMINAL.has(task.status);
  }
}

/** What tasks/get shows of a task: the detailed task of its status, without what only the demo keeps. */
export function detailed(task: DemoTask): Record<string, unknown> {
  const { answers: _answers, wake: _wake, result, inputRequests, ...base } = task;
  if (task.status === "completed") return { ...base, result };
  if (task.status === "input_required") return { ...base, inputRequests };
  return base;
}
