import type { JsonRpcMessage } from "../jsonrpc/message.js";
import { outcomeOfCode, outcomeOfRefusal, outcomeOfStatus, type Outcome, type Refusal } from "../observability/request-outcome.js";

/** What a response says about its request's outcome without reading its body back. */
export type ReplyTag = { code: number; refusal?: Refusal } | JsonRpcMessage | Promise<JsonRpcMessage>;

/**
 * Responses tagged where they are built (the errors table, CallReply, the few direct failures),
 * read by the request observer (observe.ts). A symbol-keyed property of the Response object, so
 * nothing is added to what the client receives; `carryTag` follows a response that is re-wrapped
 * (sse-lifetime.ts). A property rather than a WeakMap: a WeakMap entry per reply, keyed by an
 * object that dies young, costs a write barrier and scavenger work on every call.
 */
const TAG = Symbol("taskgate.replyTag");
const PLAIN = Symbol("taskgate.plainReply");

interface Kept {
  [TAG]?: ReplyTag;
  [PLAIN]?: PlainReply;
}

export function tagReply(response: Response, tag: ReplyTag): Response {
  (response as Response & Kept)[TAG] = tag;
  return response;
}

export function replyTag(response: Response): ReplyTag | undefined {
  return (response as Response & Kept)[TAG];
}

export function carryTag(from: Response, to: Response): Response {
  const tag = replyTag(from);
  if (tag !== undefined) tagReply(to, tag);
  return to;
}

/** A JSON-RPC error answered as a plain JSON body. */
export function failureResponse(message: JsonRpcMessage): Response {
  return jsonReply(message);
}

/** What a plain JSON reply is written from, kept beside it for a writer on Node's response (http/direct-path.ts). */
export interface PlainReply {
  status: number;
  /** Headers besides the content type; undefined when there are none. */
  headers: Record<string, string> | undefined;
  body: string;
}

const JSON_ONLY = { "content-type": "application/json" } as const;

/**
 * A JSON-RPC message answered as a plain JSON body, tagged with itself: the request observer and
 * the stream limits then know it is no stream without reading the response's headers back, and
 * the direct path writes it from its parts (`plainReplyOf`) without reading the Response.
 */
export function jsonReply(message: JsonRpcMessage, status = 200, headers?: Record<string, string>): Response {
  const body = JSON.stringify(message);
  // A fresh header object each time: a writer may add to the one it is given.
  const response = new Response(body, { status, headers: headers ? { ...JSON_ONLY, ...headers } : { ...JSON_ONLY } });
  (response as Response & Kept)[PLAIN] = { status, headers, body };
  return tagReply(response, message);
}

/** The parts of a reply built by `jsonReply`; undefined for any other. */
export function plainReplyOf(response: Response): PlainReply | undefined {
  return (response as Response & Kept)[PLAIN];
}

export interface ReplyOutcome {
  outcome: Outcome;
  /** OpenTelemetry `error.type`: the JSON-RPC code as a string, "tool_error", or "" when it went well. */
  errorType: string;
}

const OK: ReplyOutcome = { outcome: "ok", errorType: "" };
const TOOL_ERROR: ReplyOutcome = { outcome: "tool_error", errorType: "tool_error" };

/** The outcome of a tag that is not a pending stream, or of the bare HTTP status. */
export function outcomeOf(tag: Exclude<ReplyTag, Promise<JsonRpcMessage>> | undefined, status: number): ReplyOutcome {
  if (tag === undefined) return status < 400 ? OK : { outcome: outcomeOfStatus(status), errorType: String(status) };
  if ("code" in tag) return { outcome: tag.refusal ? outcomeOfRefusal(tag.refusal) : outcomeOfCode(tag.code), errorType: String(tag.code) };
  if ("error" in tag) return { outcome: outcomeOfCode(tag.error.code), errorType: String(tag.error.code) };
  if ("result" in tag && tag.result.isError === true) return TOOL_ERROR;
  return OK;
}
