import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { withFields } from "../util/with-fields.js";

/**
 * Node's response, carrying the request id to the headers `writeHead` is given. Set earlier with
 * `setHeader`, it sent every reply's `writeHead` down Node's path that merges headers set one by
 * one with those passed, header by header (docs/contributing/performance.md#x-request-id).
 * Headers the reply passes itself win, as they do over `setHeader`.
 */
export class RequestIdResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Written with the status line, unless the reply names its own. */
  requestId: string | undefined = undefined;

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const id = this.requestId;
    if (id === undefined) return super.writeHead(statusCode, reason as string, headers);
    const message = typeof reason === "string" ? reason : undefined;
    const given = typeof reason === "string" ? headers : reason;
    // A plain object is copied, never changed: a reply may write the same one more than once.
    if (given !== undefined && !Array.isArray(given)) {
      const fields = Object.hasOwn(given, "x-request-id") ? given : withFields(given, { "x-request-id": id });
      return message === undefined ? super.writeHead(statusCode, fields) : super.writeHead(statusCode, message, fields);
    }
    if (!this.hasHeader("x-request-id")) this.setHeader("x-request-id", id);
    return message === undefined ? super.writeHead(statusCode, given) : super.writeHead(statusCode, message, given);
  }
}
