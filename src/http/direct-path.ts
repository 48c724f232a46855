import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeMessage } from "../jsonrpc/decode.js";
import { isRequest, type JsonRpcMessage } from "../jsonrpc/message.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { LogContext } from "../observability/log-context.js";
import { tracingEnabled } from "../observability/tracing.js";
import { plainReplyOf, replyTag, type PlainReply, type ReplyTag } from "../wire/reply-outcome.js";
import { parseAccept } from "../wire/reply.js";
import { GatewayError, isUnexpected, wireError } from "../wire/errors.js";
import { authenticatedBefore, callerCheck, type Caller } from "./auth-guard.js";
import { hostAllowed, isJsonContentType } from "./guards.js";
import { answeredBefore, recordOperation, requestIdOf } from "./observe.js";
import { wireOf } from "../dialects/front.js";
import {
  frontRequestOf,
  limitKey,
  messageChecks,
  messageSteps,
  type Endpoint,
  type Health,
  type HttpOptions,
  type PostedMessage,
  type Security,
} from "./routes.js";
import { NO_SCOPES } from "./scope-guard.js";

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Bodies the direct path reads itself; a longer one goes to the general path unread. */
const MAX_DIRECT_BYTES = 16 * 1024;
const NO_CALLER: Caller = { principal: undefined, scopes: undefined, audience: undefined };

/**
 * The direct path: most POSTs served on Node's request and response in front of the hono app
 * (routes.ts), through the same steps and `messageSteps`; what it cannot answer exactly as the
 * app would goes there. Which requests, and why: docs/contributing/architecture.md#the-direct-path.
 */
export function directPath(
  endpoints: readonly Endpoint[],
  options: HttpOptions,
  logger: Logger,
  metrics: Metrics,
  security: Security,
  health: Health,
): (general: Listener) => Listener {
  const paths = new Map(endpoints.map((e) => [e.path, endpointPosts(e, options, logger, metrics, security, health)]));
  return (general) => (req, res) => {
    if (!buildsUrl(req.headers.host)) return refuseHost(res);
    if (req.method !== "POST") return general(req, res);
    const posts = paths.get(pathOf(req.url));
    if (posts === undefined) return general(req, res);
    const h = postHeaders(req.rawHeaders);
    if (h.mcpMethod === undefined && h.sessionId === undefined) return general(req, res);
    const length = posts.takes(h);
    if (length === undefined) return general(req, res);
    // Who is asking is settled before the body is read, as on the general path: a caller refused
    // is answered at once, whatever its body does.
    posts.admit(req, res, h, (caller, context, started) => readBody(req, length, (body) => posts.serve(req, res, h, body, general, caller, context, started)));
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

interface EndpointPosts {
  /** The body's length when the direct path may read it; undefined sends the request on unread. */
  takes(h: PostHeaders): number | undefined;
  /** The auth step, on the headers alone: `then` with the caller found, or the refusal written here. */
  admit(req: IncomingMessage, res: ServerResponse, h: PostHeaders, then: (caller: Caller, context: LogContext, started: number) => void): void;
  serve(req: IncomingMessage, res: ServerResponse, h: PostHeaders, body: Buffer, general: Listener, caller: Caller, context: LogContext, started: number): void;
}

/**
 * The headers the direct path reads, from `rawHeaders` in one pass. A repeated header is joined
 * with ", ", as @hono/node-server's lookup joins it for the general path (Node's own
 * `req.headers` keeps only the first of some, Host and Authorization among them): a request
 * is judged on the same values on either path.
 */
interface PostHeaders {
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

/**
 * The field a header fills, by its lower-case name. A switch, not a Map: a Map hashes every name
 * Node's parser made for this request, a switch mostly compares lengths. As with a Map, a header
 * named "constructor" or "__proto__" fills nothing.
 */
function fieldOf(name: string): Exclude<keyof PostHeaders, "raw"> | undefined {
  switch (name) {
    case "host":
      return "host";
    case "origin":
      return "origin";
    case "content-type":
      return "contentType";
    case "content-length":
      return "contentLength";
    case "transfer-encoding":
      return "transferEncoding";
    case "accept":
      return "accept";
    case "mcp-session-id":
      return "sessionId";
    case "mcp-protocol-version":
      return "protocolVersion";
    case "mcp-method":
      return "mcpMethod";
    case "mcp-name":
      return "mcpName";
    case "x-request-id":
      return "requestId";
    default:
      return undefined;
  }
}

function postHeaders(raw: string[]): PostHeaders {
  const h: PostHeaders = { raw };
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = fieldOf(raw[i]!.toLowerCase());
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

/** Answered by the general path instead: nothing was written. */
const HANDED_OVER = Symbol("handed over");

function endpointPosts(endpoint: Endpoint, options: HttpOptions, logger: Logger, metrics: Metrics, security: Security, health: Health): EndpointPosts {
  const { name: upstream, front, scopes = NO_SCOPES } = endpoint;
  const { audit, realm } = security;
  const resource = security.resources?.challengeFor(endpoint.path);
  const allowsHost = hostAllowed(options.allowedHosts, security.listenHost);
  const check = callerCheck(security.auth, realm, audit, { resource, requiredScopes: scopes.required });
  const maxBytes = Math.min(options.maxBodyBytes, MAX_DIRECT_BYTES);
  const debug = logger.isLevelEnabled("debug");
  const steps = messageSteps(endpoint, logger, security, health, resource);
  const checks = messageChecks(endpoint, security, health, resource);

  const takes = (h: PostHeaders): number | undefined => {
    if (h.origin !== undefined || h.transferEncoding !== undefined || tracingEnabled()) return undefined;
    const length = h.contentLength === undefined ? Number.NaN : Number(h.contentLength);
    if (!(length <= maxBytes) || !isJsonContentType(h.contentType) || !allowsHost(h.host)) return undefined;
    return length;
  };

  const admit = (req: IncomingMessage, res: ServerResponse, h: PostHeaders, then: (caller: Caller, context: LogContext, started: number) => void): void => {
    const context: LogContext = { reqId: requestIdOf(h.requestId) };
    const started = performance.now();
    const calling = check?.(
      {
        header: (name) => rawHeader(h.raw, name),
        remoteAddress: () => req.socket.remoteAddress,
      },
      context,
    );
    if (calling === undefined) return then(NO_CALLER, context, started);
    calling
      .then((caller) => {
        if (!(caller instanceof Response)) return then(caller, context, started);
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

  const serve = (
    req: IncomingMessage,
    res: ServerResponse,
    h: PostHeaders,
    body: Buffer,
    general: Listener,
    caller: Caller,
    context: LogContext,
    started: number,
  ): void => {
    const handOver = (): typeof HANDED_OVER => {
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
      if (caller !== NO_CALLER) authenticatedBefore(req, caller);
      void general(req, res);
      return HANDED_OVER;
    };
    const accepts = parseAccept(h.accept);
    // What the general path refuses before its steps (Accept, decoding), or answers from the
    // request's own signal (tasks/result), or with 202 (a notification or a response), it serves.
    if (!accepts.json && !accepts.sse) return void handOver();
    const decoded = decodeMessage(body.toString("utf8"), { maxDepth: options.maxJsonDepth });
    const message = decoded.ok ? decoded.message : undefined;
    if (!message || !isRequest(message) || message.method === "tasks/result") return void handOver();
    const { sessionId, protocolVersion } = h;

    const sent = (tag: ReplyTag | undefined, status: number): void => {
      const seconds = (performance.now() - started) / 1000;
      if (context.method === "tasks/get") metrics.tasksGet(upstream, seconds);
      recordOperation(metrics, upstream, "POST", undefined, context, tag, status, started);
      if (debug) logger.debug({ ...context, upstream, status, ms: Math.round(seconds * 1000) }, "request");
    };
    // A plain reply is written here from its parts; a refusal from its Response; a stream (or any
    // other Response) by the general path, which writes and observes it as its own.
    const send = (answered: JsonRpcMessage | Response | typeof HANDED_OVER): Promise<void> | undefined => {
      if (answered === HANDED_OVER) return undefined;
      if (!(answered instanceof Response)) return void sent(answered, writeMessage(res, answered, context.reqId));
      const tag = replyTag(answered);
      const plain = plainReplyOf(answered);
      if (plain) return void sent(tag, writePlain(res, plain, context.reqId));
      if (tag === undefined || tag instanceof Promise) {
        answeredBefore(req, { response: answered, context, started });
        return void handOver();
      }
      return writeResponse(res, answered, context.reqId).then((status) => sent(tag, status));
    };
    const posted: PostedMessage = {
      message,
      accepts,
      sessionId,
      protocolVersion,
      mcpMethod: h.mcpMethod,
      mcpName: h.mcpName,
      header: (name) => rawHeader(h.raw, name),
      signal: () => undefined,
      caller,
      log: context,
    };
    // Every request but a poll answered as one message takes the general path's steps.
    const relayed = (): Response | Promise<Response> => steps(posted);
    const broke = (err: unknown): void => {
      logger.error({ err, ...context }, "unexpected error while handling a request");
      res.destroy();
    };
    if (message.method !== "tasks/get") {
      try {
        const answered = relayed();
        return void (answered instanceof Promise ? answered.then(send) : send(answered))?.catch(broke);
      } catch (err) {
        return broke(err);
      }
    }

    const modern = wireOf(message, sessionId, protocolVersion) === "modern";
    // As routes.ts answers what a step threw: an error of the table as itself, anything else as internal.
    const failed = (err: unknown): Promise<void> | undefined => {
      if (!isUnexpected(err)) return send(wireError(err).toResponse(message.id));
      logger.error({ err, ...context }, "unexpected error while relaying a message");
      return send(new GatewayError("internal").toResponse(message.id));
    };
    // The checks messageSteps (routes.ts) takes before the front.
    const checked = (): Response | undefined => checks(posted, limitKey(caller.principal, sessionId));
    // A poll not answered as one plain message (ModernFront.answers) takes the steps as any other request.
    const answerModern = (): JsonRpcMessage | Response | Promise<JsonRpcMessage | Response> => {
      if (!front.answers(message, sessionId, protocolVersion)) return relayed();
      const refused = checked();
      if (refused) return refused;
      const answering = front.answer(frontRequestOf(posted));
      if (!answering) throw new Error(`no answer for ${message.method} on the direct path`);
      return answering;
    };
    // The session decides whether the answer is one plain message, so it is read before the rate
    // limit; any other (an unknown session included) takes the steps, which read it again.
    const answerLegacy = (): Promise<JsonRpcMessage | Response> =>
      sessionId === undefined
        ? Promise.resolve(relayed())
        : front.answerableSession(frontRequestOf(posted)).then<JsonRpcMessage | Response, Response>(
            (session) => {
              if (session === undefined) return relayed();
              return checked() ?? front.answerIn(session, message, context);
            },
            () => relayed(),
          );
    const answer = modern ? answerModern : answerLegacy;

    const run = (): Promise<void> | undefined => {
      try {
        const answered = answer();
        return answered instanceof Promise ? answered.then(send, failed) : send(answered);
      } catch (err) {
        return failed(err);
      }
    };
    try {
      run()?.catch(broke);
    } catch (err) {
      broke(err);
    }
  };

  return { takes, admit, serve };
}

/** A message as the one JSON body of the reply, with the headers the general path's Response.json carries. */
function writeMessage(res: ServerResponse, message: JsonRpcMessage, reqId: string): number {
  return writePlain(res, { status: 200, headers: undefined, body: JSON.stringify(message) }, reqId);
}

/** A reply built by jsonReply, from its parts. */
function writePlain(res: ServerResponse, plain: PlainReply, reqId: string): number {
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(plain.body),
    "x-request-id": reqId,
  };
  if (plain.headers) for (const name of Object.keys(plain.headers)) headers[name] = plain.headers[name]!;
  res.writeHead(plain.status, headers);
  res.end(plain.body);
  return plain.status;
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
function headersOf(h: PostHeaders): Headers {
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
