import { randomBytes } from "node:crypto";
import type { JsonRpcErrorObject, JsonRpcId, JsonRpcRequest } from "../jsonrpc/message.js";
import type { InputRequest } from "../store/contract.js";
import { retryWhileUnavailable } from "./store-retry.js";
import type { CallClient, UpstreamCaller } from "../upstream/caller.js";
import type { EngineDeps } from "./types.js";
import { RPC } from "../jsonrpc/codes.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * The upstream's questions during a detached call, kept in the task instead of a held
 * connection: each server→client request becomes an entry of `inputRequests` under a fresh key;
 * answers written by any replica (tasks/update) are taken by the owner and answered upstream.
 */
/** How long a question waits: a parked call's (MRTR, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr) and a task's have their own bounds. */
export interface InputTimeouts {
  taskMs: number;
  /** Whether taskMs is `tasks.inputTimeoutMs` (else what was left of the task's TTL). */
  taskMsConfigured: boolean;
  parkedMs: number;
}

export class InputBridge {
  private readonly pending = new Map<string, { frontId: JsonRpcId; timer?: NodeJS.Timeout }>();

  constructor(
    private readonly taskId: string,
    private readonly token: string,
    /** Who the call is made through and for: its answers go back the same way. */
    private readonly call: { readonly caller: UpstreamCaller; readonly client: CallClient },
    private readonly deps: EngineDeps,
    private readonly timeouts: InputTimeouts,
    /** A task's question went unanswered past its bound: the task fails with this reason. */
    private readonly onTimedOut: (reason: string) => void,
  ) {}

  /**
   * A server→client request the relay handed to the task (capabilities already checked). Its
   * clock starts once it is written: whether the call is still parked decides which bound holds.
   */
  offer(request: JsonRpcRequest): void {
    const key = `${request.method.split("/")[0]}-${randomBytes(6).toString("hex")}`;
    this.pending.set(key, { frontId: request.id });
    const change = { kind: "start-input" as const, addInputRequests: { [key]: inputRequestOf(request) }, leaseToken: this.token, now: this.deps.clock() };
    // A store that is briefly away must not turn the question into an error for the upstream:
    // keep trying while the question is pending (it times out, or the call ends, otherwise).
    void retryWhileUnavailable(
      () => this.deps.store.transitionTask(this.taskId, { ...change, now: this.deps.clock() }),
      () => this.pending.has(key),
    ).then(
      (r) => (r === undefined ? undefined : r.ok ? this.startClock(key, r.task.parked) : this.refuse(key, "the task can no longer take input")),
      () => this.refuse(key, "the task could not record the question"),
    );
  }

  /** Deliver what tasks/update wrote: take the answers from the store, answer the upstream. */
  async deliver(): Promise<void> {
    if (this.pending.size === 0) return;
    // The keys still waited for: answers a lost reply already took come back with them.
    const taken = await this.deps.store.takeInputResponses(this.taskId, this.token, this.deps.clock(), [...this.pending.keys()]);
    if (!taken.ok) return;
    for (const [key, value] of Object.entries(taken.responses)) {
      const entry = this.take(key);
      if (!entry) continue;
      await this.call.caller.answer(this.call.client, responseOf(entry.frontId, value));
    }
  }

  get waiting(): boolean {
    return (this.pending?.size ?? 0) > 0;
  }

  close(): void {
    for (const { timer } of this.pending?.values() ?? []) clearTimeout(timer);
    this.pending?.clear();
  }

  private startClock(key: string, parked: boolean): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    const { parkedMs, taskMs, taskMsConfigured } = this.timeouts;
    const ms = parked ? parkedMs : taskMs;
    entry.timer = setTimeout(() => void (parked ? this.expireParked(key, ms) : this.expireTask(key, ms, taskMsConfigured)), ms);
    entry.timer.unref();
  }

  /** A parked call's question nobody retried for: the upstream gets an error and the call goes on (docs/concepts/tasks.md, MRTR). */
  private async expireParked(key: string, ms: number): Promise<void> {
    if (!this.pending.has(key)) return;
    await this.deps.store
      .transitionTask(this.taskId, { kind: "withdraw-input", removeInputRequests: [key], leaseToken: this.token, now: this.deps.clock() })
      .catch(() => undefined);
    await this.refuse(key, `the client did not retry within tasks.mrtrTimeoutMs (${ms} ms)`);
  }

  /**
   * A task's question nobody answered in time: the task fails with a message naming the setting,
   * and the upstream gets an error for the question so its handler can unwind.
   */
  private async expireTask(key: string, ms: number, configured: boolean): Promise<void> {
    if (!this.pending.has(key)) return;
    const why = configured
      ? `no answer arrived within tasks.inputTimeoutMs (${ms} ms)`
      : `no answer arrived before the task's TTL ran out (${ms} ms; tasks.inputTimeoutMs can bound a question sooner)`;
    this.onTimedOut(why);
    await this.refuse(key, why);
  }

  private async refuse(key: string, message: string): Promise<void> {
    const entry = this.take(key);
    if (!entry) return;
    const error: JsonRpcErrorObject = { code: RPC.INTERNAL_ERROR, message };
    // Runs from timers and store callbacks that nobody awaits: an upstream that is gone is logged, not thrown.
    await this.call.caller
      .answer(this.call.client, { jsonrpc: "2.0", id: entry.frontId, error })
      .catch((err: unknown) => this.deps.logger.warn({ err, taskId: this.taskId }, "could not refuse the upstream's question"));
  }

  private take(key: string) {
    const entry = this.pending?.get(key);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.pending?.delete(key);
    return entry;
  }
}

/**
 * The request as `inputRequests` shows it: `{method, params}` without the 2025-11-25-only parts
 * (the related-task `_meta`, a task augmentation, URL-mode `elicitationId`; https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Related Task Metadata).
 */
export function inputRequestOf(request: JsonRpcRequest): InputRequest {
  if (!request.params) return { method: request.method };
  const { task: _task, elicitationId: _elicitationId, _meta, ...params } = request.params;
  if (isObject(_meta)) {
    const { [RELATED_TASK]: _related, ...meta } = _meta;
    if (Object.keys(meta).length > 0) params._meta = meta;
  }
  return { method: request.method, params };
}

/** An answer as the upstream gets it; `{ $error }` is how a 2025-11-25 client's error response is kept. */
function responseOf(id: JsonRpcId, value: unknown) {
  if (isObject(value) && isObject(value.$error)) return { jsonrpc: "2.0" as const, id, error: value.$error as unknown as JsonRpcErrorObject };
  if (isObject(value)) return { jsonrpc: "2.0" as const, id, result: value };
  return { jsonrpc: "2.0" as const, id, error: { code: RPC.INVALID_PARAMS, message: "the client's answer was not an object" } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
