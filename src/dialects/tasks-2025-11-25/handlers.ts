import type { LogContext } from "../../observability/log-context.js";
import type { CallDeps } from "../call-deps.js";
import { GatewayError, isUnexpected, wireError } from "../../wire/errors.js";
import { CallReply, type Accepts } from "../../wire/reply.js";
import { failureResponse, jsonReply } from "../../wire/reply-outcome.js";
import { failure, success, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import { callClientId, sessionClient } from "../passthrough/client-id.js";
import type { SessionRecord, TaskRecord } from "../../store/contract.js";
import type { UpstreamCaller } from "../../upstream/caller.js";
import { callerFor, policyOf, type ToolPolicy } from "../../tasks/policy.js";
import { checkInputSize } from "../input-size.js";
import { isTerminal } from "../../tasks/transitions.js";
import { questionOf, questionsToSend } from "./questions.js";
import { RELATED_TASK, taskA } from "./render.js";
import { SessionNotices } from "./session-notices.js";
import { found, taskIdOf } from "../task-lookup.js";
import { RPC } from "../../jsonrpc/codes.js";

export interface Tasks2025HandlersDeps extends CallDeps {
  keepAliveMs: number;
  /** limits.maxInputResponsesBytes: the largest answer a client may send to an upstream question. */
  maxInputResponsesBytes: number;
  listPageSize?: number;
}

export { TASKS_2025_VERSION } from "../../jsonrpc/versions.js";
import { TASKS_2025_VERSION } from "../../jsonrpc/versions.js";
import { withFields } from "../../util/with-fields.js";
const METHODS = new Set(["tools/call", "tools/list", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"]);
const TASK_METHODS = new Set(["tasks/get", "tasks/list", "tasks/cancel"]);

/**
 * The 2025-11-25 tasks, experimental in that version (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks), for sessions of that version.
 * The client asks for a task with `params.task`; taskgate's policy decides what is allowed.
 */
export class Tasks2025Handlers {
  private readonly notices = new SessionNotices();

  constructor(private readonly deps: Tasks2025HandlersDeps) {}

  handles(session: SessionRecord, method: string): boolean {
    return session.protocolVersion === TASKS_2025_VERSION && METHODS.has(method);
  }

  /**
   * `authorization`: the client's own header where the upstream forwards it (in memory only).
   * A plain tools/call is relayed with no promise of this method's own: its answer never rejects.
   */
  handle(session: SessionRecord, request: JsonRpcRequest, accepts: Accepts, signal?: AbortSignal, authorization?: string, log?: LogContext): Promise<Response> {
    // The policy known at once (the config's, and what the upstream's tools list read lately
    // says): no promise before the relay's.
    const params = request.params;
    if (request.method === "tools/call" && params?.task === undefined) {
      try {
        const policy = policyOf(this.deps.tasks, this.deps.upstream, toolName(params), this.deps.native);
        if (!(policy instanceof Promise)) return this.plainCall(session, request, accepts, authorization, policy);
      } catch (err) {
        return Promise.reject(isUnexpected(err) ? err : wireError(err));
      }
    }
    return this.handleAny(session, request, accepts, signal, authorization, log);
  }

  private async handleAny(
    session: SessionRecord,
    request: JsonRpcRequest,
    accepts: Accepts,
    signal: AbortSignal | undefined,
    authorization: string | undefined,
    log: LogContext | undefined,
  ): Promise<Response> {
    try {
      switch (request.method) {
        case "tools/call":
          return await this.toolsCall(session, request, accepts, authorization, log);
        case "tools/list":
          return await this.toolsList(session, request, accepts, authorization);
        case "tasks/result":
          return await this.result(session, request, accepts, signal);
        default:
          return jsonReply(await this.taskReply(session, request, log));
      }
    } catch (err) {
      throw isUnexpected(err) ? err : wireError(err);
    }
  }

  /** Whether taskReply() answers this method: tasks/get, tasks/list and tasks/cancel, one plain message each. */
  answers(session: SessionRecord, method: string): boolean {
    return this.handles(session, method) && TASK_METHODS.has(method);
  }

  /** What handle() answers for tasks/get, tasks/list or tasks/cancel, as the message. */
  taskReply(session: SessionRecord, request: JsonRpcRequest, log?: LogContext): Promise<JsonRpcMessage> {
    return this.taskMethod(session, request, log).then(
      (result) => success(request.id, result),
      (err: unknown) => {
        throw isUnexpected(err) ? err : wireError(err);
      },
    );
  }

  /**
   * A 2025-11-25 session's GET stream, from any replica: notifications/tasks/status for the
   * principal's tasks, and the questions of the tasks this session created, re-id'd with `:get`
   * and carrying the related-task `_meta` (which stream carries what: SessionNotices). A client
   * that polls tasks/get to the end and never holds tasks/result (the ext-tasks library) reads
   * them here. Another session's questions never come here, even of the same principal.
   */
  async watch(session: SessionRecord, sink: MessageSink): Promise<(() => Promise<void>) | undefined> {
    if (session.protocolVersion !== TASKS_2025_VERSION) return undefined;
    const asked = new Map<string, Set<string>>();
    const stream = this.notices.open(session.id, undefined, () => [...asked.keys()].forEach((id) => this.reread(session, id, onChange)));
    const onChange = (task: TaskRecord) => {
      if (stream.tell(task)) sink.send({ jsonrpc: "2.0", method: "notifications/tasks/status", params: taskA(task) });
      if (task.frontSession !== session.id) return;
      if (isTerminal(task.status)) asked.delete(task.id);
      else if (task.status === "input_required") {
        const sent = asked.get(task.id) ?? new Set<string>();
        asked.set(task.id, sent);
        for (const question of questionsToSend(task, sent, "get", (key) => stream.claim(task.id, key))) sink.send(question);
      }
    };
    const stop = await this.deps.engine.watchPrincipal(session.principal, onChange).catch((err: unknown) => {
      stream.close();
      throw err;
    });
    return async () => {
      stream.close();
      await stop();
    };
  }

  /** Another stream of the session closed leaving questions: look at the task again, as it is now. */
  private reread(session: SessionRecord, taskId: string, onChange: (task: TaskRecord) => void): void {
    void this.deps.engine.get(taskId, session.principal).then(
      (task) => task && onChange(task),
      () => undefined,
    );
  }

  /** A client's answer to a question sent on a tasks/result or GET stream; false when it is not one. The first answer to a question wins. */
  async answer(session: SessionRecord, response: JsonRpcResponse): Promise<boolean> {
    const question = questionOf(response.id);
    if (!question) return false;
    const value = "error" in response ? { $error: response.error } : response.result;
    checkInputSize(value, this.deps.maxInputResponsesBytes);
    await this.deps.engine.answer(question.taskId, session.principal, { [question.key]: value });
    return true;
  }

  /** A tools/call without `params.task`, under the tool's policy: refused when it runs only as a task, else relayed. */
  private plainCall(
    session: SessionRecord,
    request: JsonRpcRequest,
    accepts: Accepts,
    authorization: string | undefined,
    policy: ToolPolicy,
  ): Promise<Response> {
    // the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks: a required tool MUST be called as a task (-32601); -32600 is only a MAY (where the spec leaves it open).
    if (policy.taskSupport === "required")
      return Promise.resolve(
        failureResponse(
          failure(request.id, {
            code: RPC.METHOD_NOT_FOUND,
            message: `Task augmentation required for tools/call requests: tool '${toolName(request.params)}' runs only as a task`,
          }),
        ),
      );
    // A tool the upstream runs only as its own task, allowed plainly here by the config: the caller waits for the bridge.
    return this.relayed(session, request, accepts, authorization, callerFor(policy, false, this.deps.native, undefined));
  }

  private async toolsCall(
    session: SessionRecord,
    request: JsonRpcRequest,
    accepts: Accepts,
    authorization: string | undefined,
    log: LogContext | undefined,
  ): Promise<Response> {
    const { task, ...params } = request.params ?? {};
    const name = toolName(request.params);
    const { native } = this.deps;
    const policy = await policyOf(this.deps.tasks, this.deps.upstream, name, native);
    if (task === undefined) return this.plainCall(session, request, accepts, authorization, policy);
    if (policy.taskSupport === "forbidden")
      return failureResponse(failure(request.id, { code: RPC.METHOD_NOT_FOUND, message: `Tool '${name}' does not support task-augmented calls` }));
    const created = await this.deps.engine.detachNow({
      caller: callerFor(policy, true, native, this.deps.caller ?? this.deps.relay),
      upstream: this.deps.upstream.name,
      client: { ...sessionClient(session, authorization), sessionId: callClientId("a:") },
      principal: session.principal,
      frontSession: session.id,
      log,
      taskProtocol: TASKS_2025_VERSION,
      request: { ...request, params },
      ttlMs: this.ttl(task),
      pollIntervalMs: this.deps.tasks.pollIntervalMs,
      ...(policy.maxDurationMs !== undefined ? { maxDurationMs: policy.maxDurationMs } : {}),
    });
    return Response.json(success(request.id, { task: taskA(created) }));
  }

  /** The requested ttl, clamped to the maximum; the real one is reported back (the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks). */
  private ttl(task: unknown): number {
    const requested = (task as { ttl?: unknown } | null)?.ttl;
    const { defaultTtlMs, maxTtlMs } = this.deps.tasks;
    return typeof requested === "number" && Number.isFinite(requested) && requested > 0
      ? Math.min(Math.floor(requested), maxTtlMs)
      : Math.min(defaultTtlMs, maxTtlMs);
  }

  /**
   * tools/list with `execution.taskSupport` from taskgate's policy, replacing the upstream's: a
   * tool the upstream requires tasks for stays `required`, unless the config says otherwise.
   */
  private async toolsList(session: SessionRecord, request: JsonRpcRequest, accepts: Accepts, authorization: string | undefined): Promise<Response> {
    const reply = new CallReply(accepts, this.deps.keepAliveMs);
    const work = this.deps.relay.call(sessionClient(session, authorization), request, reply).then(async (r) => {
      if ("error" in r || !Array.isArray(r.result.tools)) return { ...r, id: request.id };
      const listed = r.result.tools as Array<Record<string, unknown>>;
      const policies = await Promise.all(listed.map((tool) => policyOf(this.deps.tasks, this.deps.upstream, String(tool.name), this.deps.native)));
      const tools = listed.map((tool, i) => ({ ...tool, execution: { ...(tool.execution as object | undefined), taskSupport: policies[i]!.taskSupport } }));
      return { jsonrpc: "2.0" as const, id: request.id, result: { ...r.result, tools } };
    });
    return reply.respond(work);
  }

  private relayed(
    session: SessionRecord,
    request: JsonRpcRequest,
    accepts: Accepts,
    authorization: string | undefined,
    caller?: UpstreamCaller,
  ): Promise<Response> {
    const reply = new CallReply(accepts, this.deps.keepAliveMs);
    return reply.respond((caller ?? this.deps.relay).call(sessionClient(session, authorization), request, reply));
  }

  private async taskMethod(session: SessionRecord, request: JsonRpcRequest, log: LogContext | undefined): Promise<Record<string, unknown>> {
    if (request.method === "tasks/list") return this.list(session, request);
    const taskId = taskIdOf(request);
    if (request.method === "tasks/get") return taskA(await found(this.deps.engine.view(taskId, session.principal, false, log)));
    const cancelled = await found(this.deps.engine.cancelNow(taskId, session.principal, log));
    if ("terminal" in cancelled) throw new GatewayError("invalid_params", `Cannot cancel task: already in terminal status '${cancelled.terminal.status}'`);
    return taskA(cancelled.task);
  }

  private async list(session: SessionRecord, request: JsonRpcRequest): Promise<Record<string, unknown>> {
    const cursor = request.params?.cursor;
    if (cursor !== undefined && typeof cursor !== "string") throw new GatewayError("invalid_params", "cursor must be a string");
    const page = await this.deps.engine.list(session.principal, { limit: this.deps.listPageSize ?? 50, ...(cursor !== undefined ? { cursor } : {}) });
    if (!page) throw new GatewayError("invalid_params", "invalid cursor");
    return { tasks: page.tasks.map(taskA), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /**
   * tasks/result (the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): blocks until terminal, then answers exactly what the call would
   * have. While it waits, this response's SSE stream carries the task's status changes and the
   * upstream's questions with the related-task `_meta` (see SessionNotices): a client that
   * re-opens tasks/result gets again what it left unanswered.
   */
  private async result(session: SessionRecord, request: JsonRpcRequest, accepts: Accepts, signal?: AbortSignal): Promise<Response> {
    const taskId = taskIdOf(request);
    if (!(await this.deps.engine.get(taskId, session.principal))) throw new GatewayError("task_not_found");
    const reply = new CallReply(accepts, this.deps.keepAliveMs);
    // A reply that cannot stream carries nothing before the result: the GET stream keeps telling.
    const stream = accepts.sse ? this.notices.open(session.id, taskId, () => this.reread(session, taskId, onChange)) : undefined;
    const asked = new Set<string>();
    const onChange = (task: TaskRecord) => {
      if (!stream) return;
      if (stream.tell(task)) reply.send({ jsonrpc: "2.0", method: "notifications/tasks/status", params: taskA(task) });
      for (const question of questionsToSend(task, asked, "result", (key) => stream.claim(task.id, key))) reply.send(question);
    };
    const work = this.deps.engine
      .follow(taskId, session.principal, onChange, signal)
      .then((task) => (task ? finalAnswer(request, task) : new GatewayError("task_not_found").toBody(request.id)))
      .catch((err: unknown) => wireError(err).toBody(request.id))
      .finally(() => stream?.close());
    if (accepts.sse) reply.startStream();
    return reply.respond(work);
  }
}

/**
 * What the call would have returned (the 2025-11-25 tasks utility, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): its result with the related-task `_meta`, or its
 * JSON-RPC error. A cancelled task has no result (where the spec leaves it open): taskgate answers -32603 saying so.
 */
function finalAnswer(request: JsonRpcRequest, task: TaskRecord): JsonRpcResponse {
  const related = { [RELATED_TASK]: { taskId: task.id } };
  if (task.outcome && "result" in task.outcome)
    return success(request.id, withFields(task.outcome.result, { _meta: withFields(task.outcome.result._meta as object | undefined, related) }));
  if (task.outcome && "error" in task.outcome) return failure(request.id, task.outcome.error);
  return failure(request.id, {
    code: RPC.INTERNAL_ERROR,
    message: task.statusMessage ?? `the task ended ${task.status}`,
    data: { taskId: task.id, status: task.status },
  });
}

/** The tool a tools/call names; "" when it names none (the upstream then answers for it). */
function toolName(params: Record<string, unknown> | undefined): string {
  return typeof params?.name === "string" ? params.name : "";
}
