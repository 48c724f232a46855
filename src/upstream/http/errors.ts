import { displayUrl, MASK } from "../../util/redact-url.js";
import { UpstreamError } from "../connector.js";
import { eachChunk, type ChunkSource } from "./each-chunk.js";

const SNIPPET_CHARS = 300;

/**
 * Error codes that mean the upstream's host cannot be reached: the connection could not be made
 * (refused, no such name, no route, connectTimeoutMs), or, for ETIMEDOUT, the host stopped
 * answering at the TCP level. Only these make an upstream unreachable. Everything else (a reset or
 * a close mid-answer, an HTTP client limit) happened to one exchange on a connection that was made,
 * and fails that call alone.
 */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);
/** A TLS handshake that failed (certificate, protocol): the connection was never usable either. */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_)/;

/** The undici or Node error code of `err`, looking through fetch's wrapper and a happy-eyeballs AggregateError. */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = e instanceof AggregateError && e.errors.length > 0 ? e.errors[0] : e.cause;
  }
  return undefined;
}

export function isConnectFailure(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && (NOT_CONNECTED.has(code) || TLS_FAILURE.test(code));
}

function detailOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * fetch says only "fetch failed"; the cause (ECONNREFUSED, ENOTFOUND, ...) is what helps. Some
 * causes quote the URL or a header: `secrets` are cut out of it.
 */
export function unreachable(upstreamName: string, url: string, err: unknown, secrets: readonly string[], connectTimeoutMs?: number): UpstreamError {
  const detail =
    errorCode(err) === "UND_ERR_CONNECT_TIMEOUT" && connectTimeoutMs !== undefined
      ? `no connection within ${connectTimeoutMs} ms (upstreams[].http.connectTimeoutMs)`
      : withoutSecrets(detailOf(err), secrets);
  return new UpstreamError(`upstream '${upstreamName}' is unreachable at ${displayUrl(url)}: ${detail}`, "unreachable");
}

/**
 * What became of one exchange whose connection was made but that ended without an answer: the
 * call's own failure, saying what happened; the upstream stays ready.
 */
export function exchangeBroken(upstreamName: string, method: string, err: unknown): UpstreamError {
  const code = errorCode(err);
  const what =
    code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT"
      ? `the HTTP client stopped waiting (${detailOf(err)})`
      : `the connection broke before the answer (${detailOf(err)}${code && !detailOf(err).includes(code) ? `, ${code}` : ""})`;
  return new UpstreamError(`upstream '${upstreamName}' did not answer ${method}: ${what}`, code?.endsWith("_TIMEOUT") ? "timeout" : "closed");
}

export function badStatus(upstreamName: string, method: string, status: number, body: string): UpstreamError {
  const snippet = body.trim().slice(0, SNIPPET_CHARS);
  return new UpstreamError(`upstream '${upstreamName}' answered HTTP ${status} to ${method}${snippet ? `: ${snippet}` : ""}`, "protocol");
}

/**
 * Our own error about an upstream answer quotes its body (a 401 page may echo the credential it
 * refused, a redirect page the URL it was asked for) and a transport error may quote the URL; the
 * credentials sent with the request (headers, the URL's user, password and query values: see
 * `urlSecrets`) are cut out, whole or as the token after the scheme, so they reach neither a log,
 * /readyz, a client nor a stored task's error.
 */
export function withoutCredentials(err: unknown, sent: Iterable<string>): unknown {
  if (!(err instanceof UpstreamError)) return err;
  const message = withoutSecrets(err.message, sent);
  return message === err.message ? err : new UpstreamError(message, err.reason);
}

/** `text` with every secret of `sent` cut out (longest first, so a secret's own parts do not split it). */
export function withoutSecrets(text: string, sent: Iterable<string>): string {
  const secrets = [...sent].flatMap((value) => [value, value.trim().split(/\s+/).at(-1) ?? ""]).filter((s) => s.length >= 4);
  secrets.sort((a, b) => b.length - a.length);
  return secrets.reduce((out, secret) => out.split(secret).join(MASK), text);
}

/** A body read to its end, but never more than `maxBytes` of it. */
export async function readBounded(body: ChunkSource, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // A throw cancels the body.
  await eachChunk(body, (chunk) => {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`the body is longer than ${maxBytes} bytes (upstreams[].http.maxMessageBytes)`);
    chunks.push(chunk);
  });
  return Buffer.concat(chunks).toString("utf8");
}
