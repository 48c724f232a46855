import { decodeMessage } from "../../jsonrpc/decode.js";
import { isRequest, isResponse, type JsonRpcMessage, type JsonRpcRequest } from "../../jsonrpc/message.js";
import { UpstreamError } from "../connector.js";
import type { UpstreamResponse } from "./client.js";
import { badStatus, readBounded } from "./errors.js";
import type { HttpLink } from "./link.js";
import { followStream } from "./request-stream.js";

/**
 * What the upstream answered to one POST (Streamable HTTP): 202 for a notification or an answer,
 * one JSON message, or an SSE stream carrying the response and whatever belongs to the request.
 */
export function acceptResponse(link: HttpLink, response: UpstreamResponse, message: JsonRpcMessage): Promise<void> | undefined {
  const method = "method" in message ? message.method : "a response";
  if (!response.ok) return acceptError(link, response, message, method);
  const type = response.header("content-type") ?? "";
  if (isRequest(message) && type.includes("text/event-stream")) {
    // Read in the background: send() only reports that the upstream took the request.
    void followStream(link, response.body, message);
    return undefined;
  }
  if (isRequest(message) && type.includes("application/json")) return acceptJson(link, response, message);
  return acceptEmpty(link, response, message, method, type);
}

/** Any other answer (202 and no body): right for a notification or an answer; a request got no response. */
async function acceptEmpty(link: HttpLink, response: UpstreamResponse, message: JsonRpcMessage, method: string, type: string): Promise<void> {
  await response.discard();
  if (isRequest(message))
    throw new UpstreamError(`upstream '${link.name}' answered ${method} with HTTP ${response.status} and no response (${type || "no body"})`, "protocol");
}

async function acceptJson(link: HttpLink, response: UpstreamResponse, request: JsonRpcRequest): Promise<void> {
  const text = await readBody(link, response, request.method);
  link.deliver(text, request.id);
  if (link.hooks.isWaiting(request.id))
    throw new UpstreamError(`upstream '${link.name}' answered ${request.method} with a JSON body that is not its response`, "protocol");
}

/**
 * An HTTP error can still carry the JSON-RPC response to our request, naming its id:
 * then it is a normal response, relayed untouched. Otherwise it is a transport failure.
 */
async function acceptError(link: HttpLink, response: UpstreamResponse, message: JsonRpcMessage, method: string): Promise<void> {
  const text = await readBody(link, response, method);
  const decoded = decodeMessage(text);
  if (isRequest(message) && decoded.ok && isResponse(decoded.message) && decoded.message.id === message.id) {
    link.hooks.receive(decoded.message);
    return;
  }
  throw badStatus(link.name, method, response.status, text);
}

async function readBody(link: HttpLink, response: UpstreamResponse, method: string): Promise<string> {
  try {
    return await readBounded(response.body, link.config.maxMessageBytes);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new UpstreamError(`upstream '${link.name}' sent an unreadable body for ${method}: ${detail}`, "protocol");
  }
}
