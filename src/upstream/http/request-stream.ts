import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import { pause } from "../backoff.js";
import { UpstreamError } from "../connector.js";
import type { UpstreamResponse } from "./client.js";
import type { ResponseBody } from "./exchange.js";
import { isConnectFailure } from "./errors.js";
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
export async function followStream(link: HttpLink, first: ResponseBody, request: JsonRpcRequest, lastEventId?: string): Promise<void> {
  const state: StreamState = { lastEventId, retryMs: DEFAULT_RETRY_MS, events: 0, positioned: false };
  let body: ResponseBody | undefined = first;
  let refused: unknown;
  for (let idle = 0; ; ) {
    const before = state.events;
    const broken = body ? await readOne(link, body, request, state) : (refused ?? new Error("the upstream did not resume it"));
    const signal = link.signalFor(request.id);
    if (!signal || signal.aborted || !link.hooks.isWaiting(request.id)) return;
    idle = state.events > before ? 0 : idle + 1;
    if (state.lastEventId === undefined || idle > MAX_IDLE_RESUMES) return giveUp(link, request, broken);
    await pause(state.retryMs, signal);
    refused = undefined;
    body = await resume(link, request, state.lastEventId, signal).catch((err: unknown) => void (refused = isConnectFailure(err) ? err : undefined));
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
  let response: UpstreamResponse;
  try {
    response = await openResumed(link, request, lastEventId, signal);
    // 409: the upstream still holds the stream's old connection (its replica has just let go of it): in a moment it will not.
    for (let conflicts = 1; response.status === 409 && conflicts <= MAX_IDLE_RESUMES; conflicts++) {
      await response.discard().catch(() => undefined);
      await pause(DEFAULT_RETRY_MS * conflicts, signal);
      response = await openResumed(link, request, lastEventId, signal);
    }
  } catch (err) {
    if (signal.aborted) throw new UpstreamError(`upstream '${link.name}': request abandoned`, "closed");
    // A connection that could not be made says something of the upstream; any other break, of this call.
    throw isConnectFailure(err)
      ? link.unreachable(err)
      : new UpstreamError(
          `upstream '${link.name}' broke the resumed stream of ${request.method}: ${link.redact(String((err as Error)?.message ?? err))}`,
          "closed",
        );
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
async function readOne(link: HttpLink, body: ResponseBody, request: JsonRpcRequest, state: StreamState): Promise<Error | undefined> {
  try {
    await readSse(body, link.config.maxMessageBytes, {
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

async function resume(link: HttpLink, request: JsonRpcRequest, lastEventId: string, signal: AbortSignal): Promise<ResponseBody | undefined> {
  const response = await openResumed(link, request, lastEventId, signal);
  const body = await streamOf(response);
  if (!body) link.logger.warn({ status: response.status }, "upstream refused to resume a response stream");
  return body;
}

/** A resumption belongs to the request: it carries the client Authorization (and the session) the request was sent with. */
function openResumed(link: HttpLink, request: JsonRpcRequest, lastEventId: string, signal: AbortSignal): Promise<UpstreamResponse> {
  const headers = link.headers({ accept: "text/event-stream", "last-event-id": lastEventId }, link.onBehalfFor(request.id));
  return link.client.get(link.url, headers, signal);
}

/** The SSE body of an accepted resumption; any other answer's body is let go. */
async function streamOf(response: UpstreamResponse): Promise<ResponseBody | undefined> {
  if (response.ok && (response.header("content-type") ?? "").includes("text/event-stream")) return response.body;
  await response.discard().catch(() => undefined);
  return undefined;
}

function giveUp(link: HttpLink, request: JsonRpcRequest, broken: unknown): void {
  const how = broken ? `broke (${link.redact(broken instanceof Error ? broken.message : String(broken))})` : "ended";
  const resumed = link.onBehalfFor(request.id)?.resume;
  const which = resumed
    ? `the resumed response stream of ${request.method} (upstream id ${resumed.requestId})`
    : `the response stream of ${request.method} (id ${request.id})`;
  const message = `${which} from upstream '${link.name}' ${how} before the response`;
  // A stream that broke says nothing of the upstream; a reconnection that could not be made does.
  link.hooks.failRequest(request.id, new UpstreamError(message, isConnectFailure(broken) ? "unreachable" : broken ? "closed" : "protocol"));
}
