import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../jsonrpc/message.js";
import { TASKS_2025_VERSION } from "../../jsonrpc/versions.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import { Link2025 } from "./link-2025.js";
import { createdTaskOf, isObject, taskOf } from "./shapes-2025.js";
import type {
  NativeSupport,
  StartOptions,
  UpstreamStart,
  UpstreamTaskClient,
  UpstreamTaskEvents,
  UpstreamTaskLink,
  UpstreamTaskRef,
  UpstreamTasks,
} from "./upstream-tasks.js";

/** A client as the relay knows it, with the upstream session its task lives in. */
export interface TaskChannelClient extends UpstreamTaskClient {
  upstreamSession?: string;
}

/** What the 2025-11-25 tasks need to send: the relay over the upstream session. */
export interface TaskChannel {
  call(client: TaskChannelClient, request: JsonRpcRequest, sink: MessageSink): Promise<JsonRpcResponse>;
  cancel(client: TaskChannelClient, frontId: JsonRpcId, reason?: string): Promise<void>;
  answer(client: TaskChannelClient, response: JsonRpcResponse): Promise<boolean>;
}

export interface Tasks2025Deps {
  channel: TaskChannel;
  /** The upstream's `initialize` capabilities, once initialized. */
  capabilities(): Record<string, unknown> | undefined;
  /** The upstream session requests go on now (HTTP); undefined over stdio. */
  session(): string | undefined;
  /** A tool's `execution.taskSupport` as the upstream's tools/list says. */
  toolSupport(tool: string): Promise<string | undefined>;
  /** The same when the list read lately says it without waiting; else "unknown". */
  toolSupportNow?(tool: string): string | undefined | "unknown";
  /** Called with the listener for the upstream's notifications/tasks/status params. */
  onStatus(listener: (params: Record<string, unknown>) => void): void;
  durable: boolean;
}

/**
 * An upstream speaking the tasks utility of 2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks):
 * it declares `tasks.requests.tools.call` and marks tools `execution.taskSupport`; taskgate
 * asks for a task with `params.task` and follows it with tasks/get, tasks/result, tasks/cancel.
 */
export class Tasks2025 implements UpstreamTasks {
  readonly generation = TASKS_2025_VERSION;
  readonly durable: boolean;
  private readonly links = new Map<string, Set<Link2025>>();

  constructor(private readonly deps: Tasks2025Deps) {
    this.durable = deps.durable;
    deps.onStatus((params) => this.pushed(params));
  }

  /** Tool-Level Negotiation: only under `tasks.requests.tools.call`, and only what the tool declares. */
  async support(tool: string): Promise<NativeSupport | undefined> {
    if (!declaresToolTasks(this.deps.capabilities())) return undefined;
    return nativeSupport(await this.deps.toolSupport(tool));
  }

  supportNow(tool: string): NativeSupport | undefined | "unknown" {
    if (!declaresToolTasks(this.deps.capabilities())) return undefined;
    // Undefined is an answer (no declaration): only a missing reader leaves it unknown.
    const declared = this.deps.toolSupportNow ? this.deps.toolSupportNow(tool) : "unknown";
    return declared === "unknown" ? declared : nativeSupport(declared);
  }

  async start(client: UpstreamTaskClient, request: JsonRpcRequest, options: StartOptions, events: UpstreamTaskEvents): Promise<UpstreamStart> {
    const params = { ...request.params, task: options.ttlMs === undefined ? {} : { ttl: options.ttlMs } };
    // CreateTaskResult comes at once; the task's questions come later, on tasks/result.
    const sink: MessageSink = { send: () => false };
    const response = await this.deps.channel.call(client, { ...request, params }, sink);
    if ("error" in response) return { response };
    const created = createdTaskOf(response.result);
    // A receiver that does not take the augmentation answers the call itself (Capabilities).
    if (!created) return { response };
    const session = this.deps.session();
    const ref: UpstreamTaskRef = session === undefined ? { taskId: created.taskId } : { taskId: created.taskId, session };
    return { task: ref, state: created.state, link: this.attach(client, ref, events) };
  }

  attach(client: UpstreamTaskClient, ref: UpstreamTaskRef, events: UpstreamTaskEvents): UpstreamTaskLink {
    const own: TaskChannelClient = ref.session === undefined ? client : { ...client, upstreamSession: ref.session };
    const link = new Link2025(ref, own, this.deps.channel, events, (l) => this.forget(l));
    const links = this.links.get(ref.taskId) ?? new Set<Link2025>();
    links.add(link);
    this.links.set(ref.taskId, links);
    return link;
  }

  /** notifications/tasks/status: a hint for whoever follows that task here (Task Status Notification). */
  private pushed(params: Record<string, unknown>): void {
    const task = taskOf(params);
    if (!task) return;
    for (const link of this.links.get(task.taskId) ?? []) link.events.status(task.state);
  }

  private forget(link: Link2025): void {
    const links = this.links.get(link.ref.taskId);
    links?.delete(link);
    if (links?.size === 0) this.links.delete(link.ref.taskId);
  }
}

function declaresToolTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const tasks = capabilities?.tasks;
  const requests = isObject(tasks) ? tasks.requests : undefined;
  const tools = isObject(requests) ? requests.tools : undefined;
  return isObject(tools) && isObject(tools.call);
}

function nativeSupport(declared: string | undefined): NativeSupport | undefined {
  return declared === "required" || declared === "optional" ? declared : undefined;
}
