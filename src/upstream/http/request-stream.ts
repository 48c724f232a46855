import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import { pause } from "../backoff.js";
import { UpstreamError } from "../connector.js";
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
export async function followStream(link: HttpLink, first: AsyncIterable<Uint8Array>, request: JsonRpcRequest): Promise<void> {
  const state = { lastEventId: undefined as string | undefined, retryMs: DEFAULT_RETRY_MS, events: 0 };
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

/** Reads one stream; returns why it broke, if it did not end cleanly. */
async function readOne(
  link: HttpLink,
  body: AsyncIterable<Uint8Array>,
  request: JsonRpcRequest,
  state: { lastEventId: string | undefined; retryMs: number; events: number },
): Promise<Error | undefined> {
  try {
    await readSse(body, link.config.maxMessageBytes, {
      onData: (data) => link.deliver(data, request.id),
      onEventId: (id) => {
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

/** A resumption belongs to the request: it carries the client Authorization the request was sent with. */
async function resume(link: HttpLink, request: JsonRpcRequest, lastEventId: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
  const headers = link.headers({ accept: "text/event-stream", "last-event-id": lastEventId }, link.onBehalfFor(request.id));
  const response = await fetch(link.config.url, { method: "GET", headers, signal });
  if (response.ok && response.body && (response.headers.get("content-type") ?? "").includes("text/event-stream")) return response.body;
  link.logger.warn({ status: response.status }, "upstream refused to resume a response stream");
  await response.body?.cancel();
  return undefined;
}

function giveUp(link: HttpLink, request: JsonRpcRequest, broken: Error | undefined): void {
  const how = broken ? `broke (${broken.message})` : "ended";
  const message = `the response stream of ${request.method} (id ${request.id}) from upstream '${link.name}' ${how} before the response`;
  link.hooks.failRequest(request.id, new UpstreamError(message, broken ? "unreachable" : "protocol"));
}
