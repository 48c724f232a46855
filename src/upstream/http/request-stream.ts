import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import { pause } from "../backoff.js";
import { UpstreamError } from "../connector.js";
import { MAX_MESSAGE_BYTES } from "./errors.js";
import type { HttpLink } from "./link.js";
import { readSse } from "./sse.js";

/** Used when the upstream did not say (SSE `retry:`) how long to wait before resuming. */
const DEFAULT_RETRY_MS = 500;
/** Resumptions in a row that brought nothing new before we give up on the request. */
const MAX_IDLE_RESUMES = 3;

/**
 * Follows the response stream of one request until its response arrived or nobody waits any more.
 * Everything on it is related to that request. When the stream ends early and the upstream gave
 * event ids, it is resumed with GET + `Last-Event-ID` (spec: resumability and redelivery).
 */
export async function followStream(link: HttpLink, first: AsyncIterable<Uint8Array>, request: JsonRpcRequest, lastEventId?: string): Promise<void> {
  const state: StreamState = { lastEventId, retryMs: DEFAULT_RETRY_MS, events: 0, positioned: false };
  let body: AsyncIterable<Uint8Array> | undefined = first;
  for (let idle = 0; ; ) {
    const before = state.events;
    const broken = body ? await readOne(link, body, request, state) : new Error("the upstream did not resume it");
    const signal = link.signalFor(request.id);
    if (!signal || signal.aborted || !link.hooks.isWaiting(request.id)) return;
    idle = state.events > before ? 0 : idle + 1;
    if (state.lastEventId === undefined || idle > MAX_IDLE_RESUMES) return giveUp(link, request, broken);
    await pause(state.retryMs, signal);
    body = await resume(link, request, state.lastEventId, signal).catch(() => undefined);
  }
}

interface StreamState {
  lastEventId: string | undefined;
  retryMs: number;
  events: number;
  /** The link was told where the stream can be resumed from (once: its first event id). */
  positioned: boolean;
}

/**
 * The response stream of a request sent before (by another replica), resumed with GET and
 * `Last-Event-ID` in that request's session: what the upstream sent on it after `lastEventId`,
 * then what it sends from now on, up to the response (spec: resumability and redelivery). A
 * refusal is the request's failure, saying why.
 */
export async function resumeResponse(link: HttpLink, request: JsonRpcRequest, lastEventId: string): Promise<void> {
  const signal = link.signalFor(request.id) ?? AbortSignal.abort();
  let response: Response;
  try {
    response = await openResumed(link, request, lastEventId, signal);
    // 409: the upstream still holds the stream's old connection (its replica has just let go of it): in a moment it will not.
    for (let conflicts = 1; response.status === 409 && conflicts <= MAX_IDLE_RESUMES; conflicts++) {
      await response.body?.cancel().catch(() => undefined);
      await pause(DEFAULT_RETRY_MS * conflicts, signal);
      response = await openResumed(link, request, lastEventId, signal);
    }
  } catch (err) {
    if (signal.aborted) throw new UpstreamError(`upstream '${link.name}': request abandoned`, "closed");
    throw link.unreachable(err);
  }
  const body = await streamOf(response);
  if (body) {
    void followStream(link, body, request, lastEventId);
    return;
  }
  const what = `the response stream of the call cannot be resumed after event ${lastEventId}`;
  if (response.status === 404) throw new UpstreamError(`upstream '${link.name}' no longer knows the session the call ran in (HTTP 404): ${what}`, "protocol");
  throw new UpstreamError(`upstream '${link.name}' refused to resume (HTTP ${response.status}): ${what}`, "protocol");
}

/** Reads one stream; returns why it broke, if it did not end cleanly. */
async function readOne(link: HttpLink, body: AsyncIterable<Uint8Array>, request: JsonRpcRequest, state: StreamState): Promise<Error | undefined> {
  try {
    await readSse(body, MAX_MESSAGE_BYTES, {
      onData: (data) => link.deliver(data, request.id),
      onEventId: (id) => {
        // Only the first id is reported: from it (the priming event's) the upstream replays the whole stream.
        if (!state.positioned) {
          state.positioned = true;
          link.positioned(request.id, id);
        }
        state.lastEventId = id;
        state.events++;
      },
      onRetry: (ms) => (state.retryMs = ms),
    });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

async function resume(link: HttpLink, request: JsonRpcRequest, lastEventId: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
  const response = await openResumed(link, request, lastEventId, signal);
  const body = await streamOf(response);
  if (!body) link.logger.warn({ status: response.status }, "upstream refused to resume a response stream");
  return body;
}

/** A resumption belongs to the request: it carries the client Authorization (and the session) the request was sent with. */
function openResumed(link: HttpLink, request: JsonRpcRequest, lastEventId: string, signal: AbortSignal): Promise<Response> {
  const headers = link.headers({ accept: "text/event-stream", "last-event-id": lastEventId }, link.onBehalfFor(request.id));
  return fetch(link.url, { method: "GET", headers, signal });
}

/** The SSE body of an accepted resumption; any other answer's body is let go. */
async function streamOf(response: Response): Promise<ReadableStream<Uint8Array> | undefined> {
  if (response.ok && response.body && (response.headers.get("content-type") ?? "").includes("text/event-stream")) return response.body;
  await response.body?.cancel().catch(() => undefined);
  return undefined;
}

function giveUp(link: HttpLink, request: JsonRpcRequest, broken: Error | undefined): void {
  const how = broken ? `broke (${link.redact(broken.message)})` : "ended";
  const resumed = link.onBehalfFor(request.id)?.resume;
  const which = resumed
    ? `the resumed response stream of ${request.method} (upstream id ${resumed.requestId})`
    : `the response stream of ${request.method} (id ${request.id})`;
  const message = `${which} from upstream '${link.name}' ${how} before the response`;
  link.hooks.failRequest(request.id, new UpstreamError(message, broken ? "unreachable" : "protocol"));
}
