import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeMessage } from "../jsonrpc/decode.js";
import { isRequest, type JsonRpcMessage } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { LogContext } from "../observability/log-context.js";
import { tracingEnabled } from "../observability/tracing.js";
import { replyTag, type ReplyTag } from "../wire/reply-outcome.js";
import { parseAccept } from "../wire/reply.js";
import { GatewayError, isUnexpected, wireError } from "../wire/errors.js";
import { authenticatedBefore, callerCheck, type Caller } from "./auth-guard.js";
import { hostAllowed, isJsonContentType } from "./guards.js";
import { noteRequest, recordOperation, requestIdOf } from "./observe.js";
import { wireOf, type FrontRequest } from "../dialects/front.js";
import type { Endpoint, HttpOptions, Security } from "./routes.js";
import { limitKey } from "./routes.js";
import { hasScopes, insufficientScope, NO_SCOPES, scopesFor } from "./scope-guard.js";

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Bodies the poll path reads itself; a longer one goes to the general path unread. */
const MAX_POLL_BYTES = 16 * 1024;
const NO_CALLER: Caller = { principal: undefined, scopes: undefined, audience: undefined };

/**
 * The poll path: `tasks/get` served on Node's request and response, in front of the hono app
 * (routes.ts) that serves everything else. A poll is the request a tasks client sends most, and
 * building a web Request and Response for it cost more than the rest of its work. Here it runs the
 * same steps in the same order — Host, auth, content type, size, Accept, decoding, scopes, rate
 * limit — through the same functions, reaches the same answer code routes.ts reaches through
 * Front.post (ModernFront.answer on the 2026-07-28 wire; on the legacy wire, a 2025-11-25 tasks
 * session's Tasks2025Handlers.taskReply), and writes the message as one JSON body.
 *
 * Which requests: on the 2026-07-28 wire the `Mcp-Method` header names the method
 * (SEP-2243, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http); on the
 * legacy wire, where only the body does, a small POST with a session id is read first. What the
 * poll path is not sure to answer exactly as the general path does goes there, untouched or with
 * the body it read handed on as `rawBody` (which @hono/node-server reads in place of the stream):
 * a request with an Origin (browsers: CORS), chunked or larger bodies, while tracing is on, a body
 * that is not one well-formed tasks/get, a session that is not a 2025-11-25 tasks session. Only
 * the auth step runs before a hand-over (its refusal is written here, so nothing is audited twice);
 * refusals of the steps after it are written from the same Responses routes.ts returns.
 */
export function pollPath(
  endpoints: readonly Endpoint[],
  options: HttpOptions,
  logger: Logger,
  metrics: Metrics,
  security: Security,
): (general: Listener) => Listener {
  const paths = new Map(endpoints.map((e) => [e.path, endpointPolls(e, options, logger, metrics, security)]));
  return (general) => (req, res) => {
    if (!buildsUrl(req.headers.host)) return refuseHost(res);
    if (req.method !== "POST") return general(req, res);
    const polls = paths.get(pathOf(req.url));
    if (polls === undefined) return general(req, res);
    const h = pollHeaders(req.rawHeaders);
    if (h.mcpMethod === undefined ? h.sessionId === undefined : h.mcpMethod !== "tasks/get") return general(req, res);
    const length = polls.takes(h);
    if (length === undefined) return general(req, res);
    // Who is asking is settled before the body is read, as on the general path: a caller refused
    // is answered at once, whatever its body does.
    polls.admit(req, res, h, (caller, context) => readBody(req, length, (body) => polls.serve(req, res, h, body, general, caller, context)));
  };
}

/**
 * Whether @hono/node-server can build the request's URL from this Host (its buildUrl: the same
 * fast pattern, else the WHATWG URL parser, whose host must be the header's). The general path
 * cannot serve a request it cannot build a URL for (RFC 9112 §3.2: an invalid Host is a 400).
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
function buildsUrl(host: string | undefined): boolean {
  if (host === undefined || host === "" || PLAIN_HOST.test(host)) return true;
  try {
    const { hostname } = new URL(`http://${host}/`);
    return hostname.length === host.length || hostname === (host.includes(":") ? host.replace(/:\d+$/, "") : host).toLowerCase();
  } catch {
    return false;
  }
}

/** A Host no URL can be built from: 400 with a JSON-RPC body, on every path and method. */
function refuseHost(res: ServerResponse): void {
  const body = JSON.stringify(new GatewayError("host_invalid").toBody());
  res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}

interface EndpointPolls {
  /** The body's length when the poll path may read it; undefined sends the request on unread. */
  takes(h: PollHeaders): number | undefined;
  /** The auth step, on the headers alone: `then` with the caller found, or the refusal written here. */
  admit(req: IncomingMessage, res: ServerResponse, h: PollHeaders, then: (caller: Caller, context: LogContext) => void): void;
  serve(req: IncomingMessage, res: ServerResponse, h: PollHeaders, body: Buffer, general: Listener, caller: Caller, context: LogContext): void;
}

/**
 * The headers the poll path reads, from `rawHeaders` in one pass. A repeated header is joined
 * with ", ", as @hono/node-server's lookup joins it for the general path (Node's own
 * `req.headers` keeps only the first of some, Host and Authorization among them): a request
 * is judged on the same values on either path.
 */
interface PollHeaders {
  host?: string;
  origin?: string;
  contentType?: string;
  contentLength?: string;
  transferEncoding?: string;
  accept?: string;
  sessionId?: string;
  protocolVersion?: string;
  mcpMethod?: string;
  mcpName?: string;
  requestId?: string;
  raw: string[];
}

// A Map, not an object: a header may be named "constructor" or "__proto__".
const FIELDS = new Map<string, Exclude<keyof PollHeaders, "raw">>([
  ["host", "host"],
  ["origin", "origin"],
  ["content-type", "contentType"],
  ["content-length", "contentLength"],
  ["transfer-encoding", "transferEncoding"],
  ["accept", "accept"],
  ["mcp-session-id", "sessionId"],
  ["mcp-protocol-version", "protocolVersion"],
  ["mcp-method", "mcpMethod"],
  ["mcp-name", "mcpName"],
  ["x-request-id", "requestId"],
]);

function pollHeaders(raw: string[]): PollHeaders {
  const h: PollHeaders = { raw };
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = FIELDS.get(raw[i]!.toLowerCase());
    if (field === undefined) continue;
    const value = raw[i + 1]!;
    const seen = h[field];
    h[field] = seen === undefined ? value : `${seen}, ${value}`;
  }
  return h;
}

/** Any other header by name (the auth modes' own), joined the same way; cookies with "; ". */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  const lower = name.toLowerCase();
  const separator = lower === "cookie" ? "; " : ", ";
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length === lower.length && key.toLowerCase() === lower) value = value === undefined ? raw[i + 1]! : value + separator + raw[i + 1]!;
  }
  return value;
}

const TASKS_GET = Buffer.from('"tasks/get"');

/** Answered by the general path instead: nothing was written. */
const HANDED_OVER = Symbol("handed over");

function endpointPolls(endpoint: Endpoint, options: HttpOptions, logger: Logger, metrics: Metrics, security: Security): EndpointPolls {
  const { name: upstream, front, scopes = NO_SCOPES } = endpoint;
  const { limits, audit, realm } = security;
  const resource = security.resources?.challengeFor(endpoint.path);
  const allowsHost = hostAllowed(options.allowedHosts, security.listenHost);
  const check = callerCheck(security.auth, realm, audit, { resource, requiredScopes: scopes.required });
  const scoped = hasScopes(scopes);
  const maxBytes = Math.min(options.maxBodyBytes, MAX_POLL_BYTES);
  const debug = logger.isLevelEnabled("debug");

  const takes = (h: PollHeaders): number | undefined => {
    if (h.origin !== undefined || h.transferEncoding !== undefined || tracingEnabled()) return undefined;
    const length = h.contentLength === undefined ? Number.NaN : Number(h.contentLength);
    if (!(length <= maxBytes) || !isJsonContentType(h.contentType) || !allowsHost(h.host)) return undefined;
    return length;
  };

  const admit = (req: IncomingMessage, res: ServerResponse, h: PollHeaders, then: (caller: Caller, context: LogContext) => void): void => {
    const context: LogContext = { reqId: requestIdOf(h.requestId) };
    const started = performance.now();
    const calling = check?.(
      {
        header: (name) => rawHeader(h.raw, name),
        remoteAddress: () => req.socket.remoteAddress,
      },
      context,
    );
    if (calling === undefined) return then(NO_CALLER, context);
    calling
      .then((caller) => {
        if (!(caller instanceof Response)) return then(caller, context);
        const tag = replyTag(caller);
        return writeResponse(res, caller, context.reqId).then((status) => {
          recordOperation(metrics, upstream, "POST", headersOf(h), context, tag, status, started);
          if (debug) logger.debug({ ...context, upstream, status, ms: Math.round(performance.now() - started) }, "request");
        });
      })
      .catch((err: unknown) => {
        logger.error({ err, ...context }, "unexpected error while handling a request");
        res.destroy();
      });
  };

  const serve = (req: IncomingMessage, res: ServerResponse, h: PollHeaders, body: Buffer, general: Listener, caller: Caller, context: LogContext): void => {
    const handOver = (): typeof HANDED_OVER => {
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
      if (caller !== NO_CALLER) authenticatedBefore(req, caller);
      void general(req, res);
      return HANDED_OVER;
    };
    const accepts = parseAccept(h.accept);
    // A legacy POST is read to learn its method: one that cannot be a poll goes on unparsed.
    const mayPoll = (accepts.json || accepts.sse) && (h.mcpMethod !== undefined || body.includes(TASKS_GET));
    const decoded = mayPoll ? decodeMessage(body.toString("utf8"), { maxDepth: options.maxJsonDepth }) : undefined;
    const message = decoded?.ok ? decoded.message : undefined;
    if (!message || !isRequest(message) || message.method !== "tasks/get") return void handOver();
    const { sessionId, protocolVersion } = h;
    const modern = wireOf(message, sessionId, protocolVersion) === "modern";
    if (modern ? !front.answers(message, sessionId, protocolVersion) : sessionId === undefined) return void handOver();
    const started = performance.now();
    const frontRequest = (principal: string | undefined): FrontRequest => ({
      message,
      accepts,
      sessionId,
      protocolVersion,
      mcpMethod: h.mcpMethod,
      mcpName: h.mcpName,
      principal,
      log: context,
    });

    const send = (answered: JsonRpcMessage | Response | typeof HANDED_OVER): Promise<void> | undefined => {
      if (answered === HANDED_OVER) return undefined;
      if (!(answered instanceof Response)) return void sent(answered, writeMessage(res, answered, context.reqId));
      const tag = replyTag(answered);
      return writeResponse(res, answered, context.reqId).then((status) => sent(tag, status));
    };
    const sent = (tag: ReplyTag | undefined, status: number): void => {
      const seconds = (performance.now() - started) / 1000;
      metrics.tasksGet(upstream, seconds);
      recordOperation(metrics, upstream, "POST", undefined, context, tag, status, started);
      if (debug) logger.debug({ ...context, upstream, status, ms: Math.round(seconds * 1000) }, "request");
    };
    // As routes.ts answers what a step threw: an error of the table as itself, anything else as internal.
    const failed = (err: unknown): Promise<void> | undefined => {
      if (!isUnexpected(err)) return send(wireError(err).toResponse(message.id));
      logger.error({ err, ...context }, "unexpected error while relaying a message");
      return send(new GatewayError("internal").toResponse(message.id));
    };
    // The steps after auth, as postMessage (routes.ts) takes them.
    const checked = (caller: Caller): Response | undefined => {
      noteRequest(context, message, modern ? "modern" : "legacy", sessionId);
      if (scoped) {
        const refused = insufficientScope(scopesFor(scopes, message, h.mcpName), caller.scopes, realm, resource);
        if (refused) {
          audit.record("auth.failed", caller.principal, { mode: security.auth.mode, reason: "insufficient scope", method: message.method }, context);
          return refused.toResponse(message.id);
        }
      }
      return limits.rate(limitKey(caller.principal, sessionId), message.method, context);
    };
    const answerModern = (caller: Caller): JsonRpcMessage | Response | Promise<JsonRpcMessage> => {
      const refused = checked(caller);
      if (refused) return refused;
      const answering = front.answer(frontRequest(caller.principal));
      if (!answering) throw new Error(`no answer for ${message.method} on the poll path`);
      return answering;
    };
    // The session decides whether the answer is one plain message, so it is read before the rate
    // limit; anything else (an unknown session included) goes to the general path, which reads it again.
    const answerLegacy = (caller: Caller): Promise<JsonRpcMessage | Response | typeof HANDED_OVER> =>
      front.answerableSession(frontRequest(caller.principal)).then<JsonRpcMessage | Response | typeof HANDED_OVER, typeof HANDED_OVER>(
        (session) => {
          if (session === undefined) return handOver();
          return checked(caller) ?? front.answerIn(session, message, context);
        },
        () => handOver(),
      );
    const answer = modern ? answerModern : answerLegacy;

    const run = (): Promise<void> | undefined => {
      try {
        const answered = answer(caller);
        return answered instanceof Promise ? answered.then(send, failed) : send(answered);
      } catch (err) {
        return failed(err);
      }
    };
    run()?.catch((err: unknown) => {
      logger.error({ err, ...context }, "unexpected error while handling a request");
      res.destroy();
    });
  };

  return { takes, admit, serve };
}

/** A message as the one JSON body of the reply, with the headers the general path's Response.json carries. */
function writeMessage(res: ServerResponse, message: JsonRpcMessage, reqId: string): number {
  const body = JSON.stringify(message);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-request-id": reqId });
  res.end(body);
  return 200;
}

/** A refusal built by the shared steps (a plain JSON body, never a stream), written as it is. */
function writeResponse(res: ServerResponse, response: Response, reqId: string): Promise<number> {
  return response.text().then((body) => {
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    headers["x-request-id"] = reqId;
    headers["content-length"] = String(Buffer.byteLength(body));
    res.writeHead(response.status, headers);
    res.end(body);
    return response.status;
  });
}

/** The whole body, at most `length` bytes (its Content-Length); a request that breaks off gets no answer. */
function readBody(req: IncomingMessage, length: number, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= length) chunks.push(chunk);
  });
  req.once("end", () => then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  req.once("error", () => req.socket.destroy());
}

/** The headers the request's wire is told by, for a refusal counted before the body is read. */
function headersOf(h: PollHeaders): Headers {
  const headers = new Headers();
  if (h.protocolVersion !== undefined) headers.set("mcp-protocol-version", h.protocolVersion);
  if (h.sessionId !== undefined) headers.set("mcp-session-id", h.sessionId);
  return headers;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query < 0 ? url : url.slice(0, query);
}
