import { failure, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import { RPC } from "../../jsonrpc/codes.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type {
  UpstreamQuestion,
  UpstreamTaskEvents,
  UpstreamTaskLink,
  UpstreamTaskRef,
  UpstreamTasks,
  UpstreamTaskState,
} from "../../upstream/native-tasks/upstream-tasks.js";
import { CANCELLED_CODE, type CallClient } from "../../upstream/caller.js";
import { notice, UPSTREAM_STATUS_NOTICE, UPSTREAM_TASK_NOTICE, type UpstreamTaskNotice } from "./notices.js";

/** The upstream's pollInterval, bounded: never faster than this, never slower than that. */
export const MIN_POLL_MS = 100;
export const MAX_POLL_MS = 10_000;

export interface BridgeOptions {
  /** Tell the task a call runs as (notices on the sink); a plain caller's sink never gets them. */
  trackProgress?: boolean;
  /** The lifetime asked of the upstream: the front task's. */
  ttlMs?: number;
}

export interface StopOptions {
  /** Ask the upstream to cancel its task (default); false when another replica will follow it. */
  cancelUpstream: boolean;
  /** Stop following and answer the call as cancelled now; else wait for the upstream's end. */
  abandon: boolean;
}

/**
 * One tools/call run as a task of the upstream's own, followed to its end: the upstream's
 * answer is the call's answer, its questions go to the call's sink under their keys, its status
 * is read at the upstream's pollInterval (bounded) and taken from its pushes.
 */
export class BridgedCall {
  private link?: UpstreamTaskLink;
  private cancelSent = false;
  private cancelWanted = false;
  private stop?: (response: JsonRpcResponse) => void;
  private lastStatus?: string;
  private readonly questions = new Set<string>();
  private readonly events: UpstreamTaskEvents = {
    status: (state) => this.status(state),
    question: (question) => this.ask(question),
    withdrawn: (key) => this.withdrawn(key),
  };

  constructor(
    private readonly tasks: UpstreamTasks,
    readonly client: CallClient,
    private readonly request: JsonRpcRequest,
    private readonly sink: MessageSink,
    private readonly options: BridgeOptions,
    private readonly clock: () => number,
  ) {}

  async run(): Promise<JsonRpcResponse> {
    const askedAt = this.clock();
    const started = await this.tasks
      .start(this.client, this.request, this.options.ttlMs === undefined ? {} : { ttlMs: this.options.ttlMs }, this.events)
      .catch((err: unknown) => ({
        response: failure(this.request.id, { code: RPC.INTERNAL_ERROR, message: `upstream task could not be started: ${messageOf(err)}` }),
      }));
    if ("response" in started) return { ...started.response, id: this.request.id };
    const { task, state } = started;
    const told: UpstreamTaskNotice = { taskId: task.taskId, ttlMs: state.ttlMs, askedAt, ...(task.session !== undefined ? { session: task.session } : {}) };
    this.tell(UPSTREAM_TASK_NOTICE, { ...told });
    return this.follow(started.link, state);
  }

  /** Follow a task another replica started (its ref was stored with the front task). */
  resume(ref: UpstreamTaskRef): Promise<JsonRpcResponse> {
    return this.follow(this.tasks.attach(this.client, ref, this.events), undefined);
  }

  /** The client's answer to one of this call's questions; false when it is not one. */
  answer(response: JsonRpcResponse): Promise<boolean> {
    const key = String(response.id);
    if (!this.link || !this.questions.delete(key)) return Promise.resolve(false);
    return this.link.answer(key, "error" in response ? { error: response.error } : { result: response.result });
  }

  cancel({ cancelUpstream, abandon }: StopOptions): void {
    if (cancelUpstream) {
      this.cancelWanted = true;
      this.sendCancel();
    }
    if (abandon) this.stop?.(failure(this.request.id, { code: CANCELLED_CODE, message: "Request cancelled by the client" }));
  }

  private follow(link: UpstreamTaskLink, first: UpstreamTaskState | undefined): Promise<JsonRpcResponse> {
    this.link = link;
    if (first) this.status(first);
    if (this.cancelWanted) this.sendCancel();
    const stopped = new Promise<JsonRpcResponse>((resolve) => (this.stop = resolve));
    const result = link.result().then(
      (response) => callAnswer(response, this.request.id),
      (err: unknown) => failure(this.request.id, { code: RPC.INTERNAL_ERROR, message: messageOf(err) }),
    );
    const polling = this.poll(link, first?.pollIntervalMs, stopped);
    return Promise.race([result, stopped, polling]).finally(() => {
      this.stop?.(failure(this.request.id, { code: RPC.INTERNAL_ERROR, message: "ended" }));
      link.close();
    });
  }

  /** tasks/get at the upstream's pace; resolves only when the upstream no longer knows the task. */
  private async poll(link: UpstreamTaskLink, intervalMs: number | undefined, stopped: Promise<unknown>): Promise<JsonRpcResponse> {
    let done = false;
    void stopped.then(() => (done = true));
    let wait = bounded(intervalMs);
    for (;;) {
      await Promise.race([sleep(wait), stopped]);
      if (done) return new Promise(() => undefined);
      const state = await link.get().catch(() => null);
      if (state === undefined) {
        const message = `the upstream no longer knows task ${link.ref.taskId} (it expired, or the upstream session holding it ended)`;
        return failure(this.request.id, { code: RPC.INTERNAL_ERROR, message });
      }
      if (state) {
        this.status(state);
        wait = bounded(state.pollIntervalMs);
      }
    }
  }

  private status(state: UpstreamTaskState): void {
    const message = state.statusMessage;
    if (message === undefined || message === this.lastStatus) return;
    this.lastStatus = message;
    this.tell(UPSTREAM_STATUS_NOTICE, { status: state.status, statusMessage: message });
  }

  private ask(question: UpstreamQuestion): void {
    this.questions.add(question.key);
    const request = {
      jsonrpc: "2.0" as const,
      id: question.key,
      method: question.request.method,
      ...(question.request.params ? { params: question.request.params } : {}),
    };
    if (this.sink.send(request)) return;
    this.questions.delete(question.key);
    const error = { code: RPC.INTERNAL_ERROR, message: "the client has no open stream for this call (it accepts no text/event-stream)" };
    void this.link?.answer(question.key, { error }).catch(() => undefined);
  }

  /** The upstream took its question back: so does the front, as the relay does for a plain call. */
  private withdrawn(key: string): void {
    if (this.questions.delete(key)) this.sink.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: key } });
  }

  private sendCancel(): void {
    if (this.cancelSent || !this.link) return;
    this.cancelSent = true;
    void this.link.cancel().catch(() => undefined);
  }

  private tell(method: string, params: Record<string, unknown>): void {
    if (this.options.trackProgress) this.sink.send(notice(method, params));
  }
}

/** The upstream's answer under the front request's id; its own end `cancelled` as a cancelled call. */
function callAnswer(response: JsonRpcResponse, id: JsonRpcId): JsonRpcResponse {
  if (!("error" in response) || (response.error.data as { status?: unknown } | undefined)?.status !== "cancelled") return { ...response, id };
  return failure(id, { code: CANCELLED_CODE, message: response.error.message, data: { status: "cancelled" } });
}

function bounded(ms: number | undefined): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, ms ?? 1_000));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
