import { RPC } from "../../jsonrpc/codes.js";
import { failure, isFailure, type JsonRpcErrorObject, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { UpstreamError, type UpstreamRequest } from "../connector.js";
import { TASKS_EXTENSION, clientCapabilitiesFor, isObject, withEnvelope } from "./envelope.js";

/** What a round of a call needs from the session: send it, ask a question of whoever holds the call, stop it upstream. */
export interface RoundLink {
  /** One round, under a new JSON-RPC id (`onId`); rejects as the session's requests do. */
  send(
    method: string,
    params: Record<string, unknown>,
    options: { signal: AbortSignal; onId: (id: JsonRpcId) => void; authorization?: string },
  ): Promise<JsonRpcResponse>;
  /** Hand a server→client request to the call's holder (as a legacy session's mid-call request); false when nobody listens. */
  ask(request: JsonRpcRequest, relatedTo: JsonRpcId): boolean;
  /** Stop the upstream working on round `wireId` (HTTP: close its stream; stdio: notifications/cancelled). */
  cancel(wireId: JsonRpcId, reason: string | undefined): void;
}

export type Answer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

interface Call {
  /** The id of the round on the wire right now; undefined between rounds. */
  inFlight: JsonRpcId | undefined;
  cancelled: boolean;
  readonly stopped: AbortController;
  readonly questions: Set<string>;
}

/** The requests that may end a round with `input_required` (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);
/** A server that asks without end is not followed forever. */
const MAX_ROUNDS = 16;

/**
 * Calls on the 2026-07-28 wire, where a server that needs input ends the round with
 * `resultType: "input_required"`, `inputRequests` and `requestState`, and the client retries
 * under a new id with `inputResponses` and the state echoed verbatim (MRTR, SEP-2322). Each
 * question is handed on as the server→client request a legacy session would have sent, related
 * to the call's first id, so the relay, the task input bridge and the front MRTR rounds take it
 * exactly as they take a legacy server's; the answers come back through `answer()`, and the
 * call is retried upstream with them. Callers see one request under one id, as on a session.
 */
export class ModernCalls {
  private readonly calls = new Map<JsonRpcId, Call>();
  private readonly open = new Map<string, (answer: Answer) => void>();
  private nextQuestion = 0;

  constructor(
    private readonly name: string,
    private readonly link: RoundLink,
  ) {}

  async request(req: UpstreamRequest): Promise<JsonRpcResponse> {
    // One controller per call: its rounds and its questions all stop with it.
    const call: Call = { inFlight: undefined, cancelled: false, stopped: new AbortController(), questions: new Set() };
    const stop = (reason?: unknown): void => call.stopped.abort(reason);
    if (req.signal?.aborted) stop(req.signal.reason);
    else req.signal?.addEventListener("abort", () => stop(req.signal?.reason), { once: true });
    req.stopWaiting?.(stop);
    let callId: JsonRpcId | undefined;
    const onId = (id: JsonRpcId): void => {
      call.inFlight = id;
      if (callId !== undefined) return;
      callId = id;
      this.calls.set(id, call);
      req.onId?.(id);
    };
    const authorization = req.authorization === undefined ? {} : { authorization: req.authorization };
    let params = withEnvelope(req.params, clientCapabilitiesFor(req.clientCapabilities, req.extensions));
    try {
      for (let round = 1; ; round++) {
        const response = await this.link.send(req.method, params, { signal: call.stopped.signal, onId, ...authorization });
        call.inFlight = undefined;
        const asked = inputRequiredOf(response);
        if (!asked) return completed(response, this.name, req.extensions);
        if (!MRTR_METHODS.has(req.method) || round >= MAX_ROUNDS || callId === undefined) return failure(response.id, this.tooManyRounds(req.method, round));
        const answers = await this.askAll(asked.inputRequests, callId, call);
        if (call.cancelled) await stopped(call.stopped.signal, this.name, req.method);
        if ("error" in answers) return failure(response.id, answers.error);
        params = { ...params, inputResponses: answers.responses };
        if (asked.requestState === undefined) delete params.requestState;
        else params.requestState = asked.requestState;
      }
    } finally {
      if (callId !== undefined) this.calls.delete(callId);
      for (const id of call.questions) this.open.delete(id);
    }
  }

  /** The answer to a question this object asked; false when the id is not one of its open questions. */
  answer(id: JsonRpcId, answer: Answer): boolean {
    const resolve = this.open.get(String(id));
    if (!resolve) return false;
    this.open.delete(String(id));
    resolve(answer);
    return true;
  }

  /**
   * notifications/cancelled for a call: the round on the wire is stopped upstream, and no
   * further round is sent. Like a legacy server after a cancel, the call then never answers;
   * its caller stops waiting when it chooses to (2025-11-25 cancellation).
   */
  cancel(callId: JsonRpcId, reason: string | undefined): boolean {
    const call = this.calls.get(callId);
    if (!call) return false;
    call.cancelled = true;
    if (call.inFlight !== undefined) this.link.cancel(call.inFlight, reason);
    return true;
  }

  private async askAll(
    requests: Record<string, unknown>,
    callId: JsonRpcId,
    call: Call,
  ): Promise<{ responses: Record<string, unknown> } | { error: JsonRpcErrorObject }> {
    const keys = Object.keys(requests);
    const answers = await abortable(Promise.all(keys.map((key) => this.ask(requests[key], callId, call))), call.stopped.signal, this.name);
    const responses: Record<string, unknown> = {};
    for (const [i, key] of keys.entries()) {
      const answer = answers[i]!;
      if ("result" in answer) responses[key] = answer.result;
      // A refused or unanswered elicitation is the user dismissing it (2026-07-28 elicitation):
      // the server decides what follows. Sampling and roots have no such answer: the call fails.
      else if (isObject(requests[key]) && requests[key].method === "elicitation/create") responses[key] = { action: "cancel" };
      else return { error: { code: answer.error.code, message: `the upstream's question got no answer: ${answer.error.message}` } };
    }
    return { responses };
  }

  private ask(inputRequest: unknown, callId: JsonRpcId, call: Call): Promise<Answer> {
    if (!isObject(inputRequest) || typeof inputRequest.method !== "string")
      return Promise.resolve({ error: { code: RPC.INTERNAL_ERROR, message: `upstream '${this.name}' sent an input request without a method` } });
    const id = `mrtr-${++this.nextQuestion}`;
    const params = isObject(inputRequest.params) ? { params: inputRequest.params } : {};
    return new Promise<Answer>((resolve) => {
      this.open.set(id, resolve);
      call.questions.add(id);
      if (this.link.ask({ jsonrpc: "2.0", id, method: inputRequest.method as string, ...params }, callId)) return;
      this.answer(id, { error: { code: RPC.INTERNAL_ERROR, message: "taskgate cannot take questions from this upstream right now" } });
    });
  }

  private tooManyRounds(method: string, round: number): JsonRpcErrorObject {
    const why = MRTR_METHODS.has(method)
      ? `asked for input ${round} times; taskgate stops following at ${MAX_ROUNDS}`
      : `answered ${method} with input_required, which only tools/call, prompts/get and resources/read may`;
    return { code: RPC.INTERNAL_ERROR, message: `upstream '${this.name}' ${why}` };
  }
}

/** `input_required`, with what it asks (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). */
function inputRequiredOf(response: JsonRpcResponse): { inputRequests: Record<string, unknown>; requestState?: string } | undefined {
  if (isFailure(response) || response.result.resultType !== "input_required") return undefined;
  const { inputRequests, requestState } = response.result;
  return { inputRequests: isObject(inputRequests) ? inputRequests : {}, ...(typeof requestState === "string" ? { requestState } : {}) };
}

/**
 * A final result as a session's would read: `resultType: "complete"` (or none, from an older
 * server) is the wire's, not the result's. Any other type is one taskgate did not negotiate
 * (a client MUST treat it as invalid, 2026-07-28 basic).
 */
function completed(response: JsonRpcResponse, name: string, extensions: Record<string, unknown> | undefined): JsonRpcResponse {
  if (isFailure(response)) return response;
  const { resultType, ...result } = response.result;
  if (resultType === undefined || resultType === "complete") return { ...response, result };
  // The tasks extension's CreateTaskResult, on a request that declared it (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md).
  if (resultType === "task" && extensions?.[TASKS_EXTENSION] !== undefined) return response;
  return failure(response.id, {
    code: RPC.INTERNAL_ERROR,
    message: `upstream '${name}' answered with resultType '${String(resultType)}', which taskgate did not negotiate`,
  });
}

function abortable<T>(work: Promise<T>, signal: AbortSignal, name: string): Promise<T> {
  return Promise.race([work, stopped(signal, name, "a question")]);
}

/** Rejects once the caller stops waiting, as the session's own requests do (reason "closed"). */
function stopped(signal: AbortSignal, name: string, what: string): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void =>
      reject(Object.assign(new UpstreamError(`stopped waiting for ${what} to upstream '${name}': aborted by the caller`, "closed"), { cause: signal.reason }));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}
