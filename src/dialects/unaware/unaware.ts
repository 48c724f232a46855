import type { LogContext } from "../../observability/log-context.js";
import type { CallDeps } from "../call-deps.js";
import type { Config } from "../../config/schema.js";
import { GatewayError, storeCall, wireError } from "../../wire/errors.js";
import { success, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { CallClient, UpstreamCaller } from "../../upstream/caller.js";
import { callerFor, handlesUnaware, policyOf, toolPolicy } from "../../tasks/policy.js";
import type { TaskCall } from "../../tasks/types.js";
import { gatewayToolKind, gatewayTools } from "./gateway-tools.js";
import { detachedResult } from "./render.js";
import { callGatewayTool } from "./tool-calls.js";

export interface UnawareDeps extends CallDeps {
  maxInputResponsesBytes: number;
}

/** A tools/call of a caller that declared no task support, from either wire. */
export interface UnawareCall {
  /** The request as the caller sent it (its id is answered). */
  request: JsonRpcRequest;
  /** The request as the upstream gets it. */
  upstreamRequest: JsonRpcRequest;
  client: CallClient;
  principal: string;
  /** The front request's log context: the task's lines carry it. */
  log?: LogContext;
}

/**
 * `tasks.unawareClients: handle`: callers that declared neither task dialect still get
 * long calls detached. Their tools/call runs through the engine exactly as a call of the tasks extension does
 * (sync-call.ts: detach after detachAfterMs, at once for a required tool) and, once detached, is
 * answered with an ordinary CallToolResult naming the gateway tools; those tools read, cancel
 * and answer the task through the engine, as tasks/get, tasks/cancel and tasks/update do.
 */
export class Unaware {
  private readonly names: Config["tasks"]["gatewayTools"];
  /** Whether tools/list shows the gateway tools: some tool of this upstream is handled. */
  readonly active: boolean;
  /** Legacy calls not answered yet, by session and request id: a client's cancel must still reach them. */
  private readonly waiting = new Map<string, CallClient>();

  constructor(private readonly deps: UnawareDeps) {
    this.names = deps.tasks.gatewayTools;
    this.active = handlesUnaware(deps.tasks, deps.upstream);
  }

  /** A tools/call this mode serves: a gateway tool, or a tool in handle mode that may become a task. */
  takesCall(name: string): boolean {
    if (!this.active) return false;
    if (gatewayToolKind(this.names, name)) return true;
    return this.detaches(name);
  }

  /**
   * Start the call. What refuses it before it starts (store away, task limit, draining, bad
   * input) is thrown, so the front answers with its HTTP status; `answer` then never rejects and
   * is the call's answer before the modern wire shapes it.
   */
  async call(call: UnawareCall, front: MessageSink): Promise<{ answer: Promise<JsonRpcResponse> }> {
    const { request } = call;
    const name = String(request.params?.name ?? "");
    const kind = gatewayToolKind(this.names, name);
    if (kind) {
      const args = asRecord(request.params?.arguments);
      const result = await storeCall(() =>
        callGatewayTool({ engine: this.deps.engine, names: this.names, maxInputResponsesBytes: this.deps.maxInputResponsesBytes }, kind, call.principal, args),
      );
      return { answer: Promise.resolve(success(request.id, result)) };
    }
    // Draining: no new task here; the caller retries on a replica that stays (HTTP 503).
    if (this.deps.engine.isDraining) throw new GatewayError("shutting_down");
    const policy = await policyOf(this.deps.tasks, this.deps.upstream, name, this.deps.native);
    const asked = this.taskCall(call, policy.maxDurationMs, callerFor(policy, true, this.deps.native, this.deps.caller ?? this.deps.relay));
    if (policy.taskSupport === "required") {
      const created = await storeCall(() => this.deps.engine.detachNow(asked));
      return { answer: Promise.resolve(success(request.id, detachedResult(created, name, this.names))) };
    }
    // Counted against the caller's task limit before anything starts, so a refusal is a clean 429.
    const admitted = await storeCall(() => this.deps.engine.admit(asked));
    const options = { detachAfterMs: policy.detachAfterMs, detachOnInput: true };
    const answer = this.deps.engine.sync.start(admitted, { method: "tools/call", name }, front, options).then(
      (outcome): JsonRpcResponse => {
        if ("inline" in outcome) return { ...outcome.inline, id: request.id };
        if ("task" in outcome) return success(request.id, detachedResult(outcome.task, name, this.names, outcome.asking === true));
        return new GatewayError("internal").toBody(request.id);
      },
      (err: unknown) => wireError(err).toBody(request.id),
    );
    return { answer };
  }

  /**
   * A legacy session's call, until it is answered: its notifications/cancelled then stops it
   * upstream (the call runs under a client id of its own, which the session's cancel does not name).
   */
  track(sessionId: string, requestId: JsonRpcRequest["id"], client: CallClient, answer: Promise<unknown>): void {
    const key = `${sessionId}\n${String(requestId)}`;
    this.waiting.set(key, client);
    void answer.finally(() => this.waiting.delete(key));
  }

  /** A cancel before the call was answered; once detached, the task goes on (the cancel tool stops it). */
  async cancelWaiting(sessionId: string, requestId: JsonRpcRequest["id"], reason?: string): Promise<void> {
    const client = this.waiting.get(`${sessionId}\n${String(requestId)}`);
    // The bridge hands a call that is not its own to the relay, which hands a pooled one to the pool.
    if (client) await (this.deps.native ?? this.deps.caller ?? this.deps.relay).cancel(client, requestId, reason);
  }

  /**
   * tools/list for such a caller: the gateway tools added (first page only). A handled tool loses
   * its outputSchema: its answer may be the detached result, which follows no schema of the
   * upstream's (a client checks structuredContent against it); the result tool returns the
   * upstream's structured result as it is.
   */
  listed(request: JsonRpcRequest, response: JsonRpcResponse): JsonRpcResponse {
    if ("error" in response || !Array.isArray(response.result.tools)) return { ...response, id: request.id };
    const own = new Set(Object.values(this.names));
    const tools = (response.result.tools as Array<Record<string, unknown>>)
      .filter((tool) => !own.has(String(tool.name)))
      .map((tool) => (this.detaches(String(tool.name)) ? withoutOutputSchema(tool) : tool));
    if (request.params?.cursor === undefined) tools.push(...gatewayTools(this.names));
    return success(request.id, { ...response.result, tools });
  }

  private detaches(name: string): boolean {
    const policy = toolPolicy(this.deps.tasks, this.deps.upstream, name);
    return policy.unawareClients === "handle" && policy.taskSupport !== "forbidden";
  }

  private taskCall(call: UnawareCall, maxDurationMs: number | undefined, caller: UpstreamCaller): TaskCall {
    const { task: _task, ...params } = call.upstreamRequest.params ?? {};
    const { tasks } = this.deps;
    return {
      caller,
      upstream: this.deps.upstream.name,
      client: { ...call.client, capabilities: answerable(call.client.capabilities) },
      principal: call.principal,
      taskProtocol: "none",
      request: { ...call.upstreamRequest, params },
      ttlMs: Math.min(tasks.defaultTtlMs, tasks.maxTtlMs),
      pollIntervalMs: tasks.pollIntervalMs,
      ...(maxDurationMs !== undefined ? { maxDurationMs } : {}),
      ...(call.log ? { log: call.log } : {}),
    };
  }
}

/**
 * The answer tool can carry a form elicitation's answer whatever the caller declared, so such a
 * question reaches the task instead of being refused to the upstream. Sampling and roots stay
 * as declared: the caller's model would have to make up their answers.
 */
function answerable(capabilities: Record<string, unknown>): Record<string, unknown> {
  return capabilities.elicitation ? capabilities : { ...capabilities, elicitation: {} };
}

function withoutOutputSchema(tool: Record<string, unknown>): Record<string, unknown> {
  const { outputSchema: _schema, ...rest } = tool;
  return rest;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
