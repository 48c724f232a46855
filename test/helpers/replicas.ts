import { randomBytes } from "node:crypto";
import { modern, WITH_TASKS } from "./modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "./processes.js";
import { untilEnded, untilTask } from "./until.js";

export { TERMINAL } from "./until.js";

/** Short leases so a stopped owner shows within a couple of seconds (tests only). */
export const FAST_TASKS = { detachAfterMs: 200, cancelGraceMs: 300, pollIntervalMs: 200, leaseMs: 1500, reaperIntervalMs: 300 };

/** Required-task policies for the demo tools the replica tests drive. */
const TOOLS = { hang: { taskSupport: "required" }, sleep: { taskSupport: "required" }, echo: { taskSupport: "required" }, deploy: { taskSupport: "required" } };

/** A gateway config on a shared Redis prefix, in front of its own demo server over stdio. */
export function replicaConfig(store: Record<string, unknown>, tasks: Record<string, unknown> = {}) {
  return { store, tasks: { ...FAST_TASKS, ...tasks }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: TOOLS }] };
}

/** `n` real taskgate processes sharing one store (a fresh key prefix unless `store` has one). */
export async function startReplicas(n: number, redisUrl: string, tasks: Record<string, unknown> = {}): Promise<GatewayProcess[]> {
  const store = { redisUrl, keyPrefix: `t${randomBytes(4).toString("hex")}:` };
  return Promise.all(Array.from({ length: n }, () => startGateway(replicaConfig(store, tasks))));
}

/** The tasks extension: a tools/call that becomes a task at once (the tools above are `required`). */
export async function startTask(url: string, name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS): Promise<string> {
  const { body } = await modern(url, "tools/call", { name, arguments: args }, { capabilities });
  if (body?.result?.resultType !== "task") throw new Error(`no task: ${JSON.stringify(body)}`);
  return body.result.taskId as string;
}

/** Poll until `accept(task)` says yes, on whichever live gateway answers (until.ts). */
export const until = (urls: readonly string[], taskId: string, accept: (task: any) => boolean, timeoutMs?: number, what?: string) =>
  untilTask(urls, taskId, accept, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(what !== undefined ? { what } : {}) });

export const ended = (urls: readonly string[], taskId: string, timeoutMs?: number) => untilEnded(urls, taskId, timeoutMs !== undefined ? { timeoutMs } : {});
