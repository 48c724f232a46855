import type { CreateTaskRequestHandlerExtra } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { ElicitResultSchema, type CallToolResult, type ElicitRequestFormParams, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";

/** The longest a task of this server is kept, from its creation; a longer ttl asked for is cut to it. */
export const NATIVE_MAX_TTL_MS = 600_000;
const POLL_INTERVAL_MS = 200;

/**
 * One task of the task-native demo server, run in the background after its CreateTaskResult is
 * sent: its status and statusMessage in the SDK's task store, its question queued for the
 * client's tasks/result (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Input Required Status),
 * its end stored as the result. Every step first checks that nobody cancelled the task.
 */
export class NativeWork {
  private constructor(
    readonly taskId: string,
    private readonly extra: CreateTaskRequestHandlerExtra,
    private readonly log: (line: string) => void,
  ) {}

  /** Make the task (the ttl the client asked for, at most NATIVE_MAX_TTL_MS) and start `body` on it. */
  static async start(tool: string, extra: CreateTaskRequestHandlerExtra, log: (line: string) => void, body: (work: NativeWork) => Promise<CallToolResult>) {
    const ttl = Math.min(extra.taskRequestedTtl ?? NATIVE_MAX_TTL_MS, NATIVE_MAX_TTL_MS);
    const task = await extra.taskStore.createTask({ ttl, pollInterval: POLL_INTERVAL_MS });
    const work = new NativeWork(task.taskId, extra, log);
    log(`native task ${task.taskId} started ${tool}`);
    void work.run(body);
    return { task };
  }

  /** Still running: false once the task was cancelled (tasks/cancel) or expired. */
  async running(): Promise<boolean> {
    const task = await this.extra.taskStore.getTask(this.taskId).catch(() => undefined);
    return task?.status === "working" || task?.status === "input_required";
  }

  async status(statusMessage: string): Promise<void> {
    if (await this.running()) await this.extra.taskStore.updateTaskStatus(this.taskId, "working", statusMessage);
  }

  /** Wait `ms`, in short steps, stopping early when the task is cancelled. False: it was. */
  async pause(ms: number): Promise<boolean> {
    for (let left = ms; left > 0; left -= 50) {
      if (!(await this.running())) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, left)));
    }
    return this.running();
  }

  /** Ask the client, as this task (input_required until the answer comes). */
  async ask(params: ElicitRequestFormParams): Promise<ElicitResult> {
    await this.extra.taskStore.updateTaskStatus(this.taskId, "input_required", params.message);
    // Queued for the client's tasks/result with the related-task `_meta` (the SDK's typing leaves
    // relatedTask out of a handler's options; its runtime takes it, as server-everything does).
    const related = { relatedTask: { taskId: this.taskId } } as Parameters<CreateTaskRequestHandlerExtra["sendRequest"]>[2];
    const answer = await this.extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, related);
    if (await this.running()) await this.extra.taskStore.updateTaskStatus(this.taskId, "working", "Answer received");
    return answer;
  }

  private async run(body: (work: NativeWork) => Promise<CallToolResult>): Promise<void> {
    try {
      const result = await body(this);
      if (!(await this.running())) return this.log(`native task ${this.taskId} saw its cancel`);
      await this.extra.taskStore.storeTaskResult(this.taskId, result.isError ? "failed" : "completed", result);
      this.log(`native task ${this.taskId} completed`);
    } catch (err) {
      this.log(`native task ${this.taskId} failed: ${err instanceof Error ? err.message : String(err)}`);
      if (await this.running()) await this.extra.taskStore.updateTaskStatus(this.taskId, "failed", String(err)).catch(() => undefined);
    }
  }
}
