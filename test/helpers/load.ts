import { getTask, modern, WITH_TASKS } from "./modern.js";
import { TERMINAL } from "./replicas.js";

/** A small seeded generator (mulberry32): a failing run can be replayed with its printed seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Plan {
  tool: "echo" | "deploy" | "sleep" | "crunch";
  args: Record<string, unknown>;
  /** deploy: the answer to its question. */
  confirm?: boolean;
  /** sleep: cancel this long after the task was acknowledged. */
  cancelAfterMs?: number;
}

export interface Outcome {
  plan: Plan;
  taskId: string;
  /** A tasks/cancel was acknowledged for it. */
  cancelSent: boolean;
  final: any;
}

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One client's task, as a careful tasks-extension client drives it: create (retrying while the store is
 * unavailable: nothing was acknowledged yet), then poll any replica, answer questions, cancel when
 * planned, until terminal. Every loop is bounded by `deadline`.
 */
export async function drive(urls: readonly string[], plan: Plan, random: () => number, deadline: number, onAcknowledged: () => void): Promise<Outcome> {
  const pick = () => urls[Math.floor(random() * urls.length)]!;
  const taskId = await retry(deadline, async () => {
    const { body } = await modern(pick(), "tools/call", { name: plan.tool, arguments: plan.args }, { capabilities: ELICIT });
    return body?.result?.resultType === "task" ? (body.result.taskId as string) : undefined;
  });
  onAcknowledged();
  const cancelAt = plan.cancelAfterMs === undefined ? Infinity : Date.now() + plan.cancelAfterMs;
  let cancelSent = false;
  while (Date.now() < deadline) {
    if (!cancelSent && Date.now() >= cancelAt) {
      const ack = await modern(pick(), "tasks/cancel", { taskId }, { capabilities: WITH_TASKS }).catch(() => undefined);
      cancelSent = ack?.body?.result?.resultType === "complete";
    }
    const task = (await getTask(pick(), taskId).catch(() => undefined))?.body?.result;
    if (task && TERMINAL.includes(task.status)) return { plan, taskId, cancelSent, final: task };
    if (task?.status === "input_required") {
      const answers = Object.fromEntries(
        Object.keys(task.inputRequests).map((key) => [key, { action: "accept", content: { confirm: plan.confirm === true } }]),
      );
      await modern(pick(), "tasks/update", { taskId, inputResponses: answers }, { capabilities: WITH_TASKS }).catch(() => undefined);
    }
    await pause(200 + random() * 200);
  }
  const last = (await getTask(pick(), taskId).catch(() => undefined))?.body?.result;
  return { plan, taskId, cancelSent, final: { status: "not ended in time", last } };
}

async function retry<T>(deadline: number, attempt: () => Promise<T | undefined>): Promise<T> {
  while (Date.now() < deadline) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    await pause(100);
  }
  throw new Error("no task created before the deadline");
}
