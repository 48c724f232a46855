import { displayUrl, MASK } from "../../util/redact-url.js";
import { UpstreamError } from "../connector.js";

/** Largest JSON body or SSE event taken from an HTTP upstream (the stdio default of maxLineBytes). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const SNIPPET_CHARS = 300;

/**
 * fetch says only "fetch failed"; the cause (ECONNREFUSED, ENOTFOUND, ...) is what helps. Some
 * causes quote the URL or a header: `secrets` are cut out of it.
 */
export function unreachable(upstreamName: string, url: string, err: unknown, secrets: readonly string[]): UpstreamError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const detail = withoutSecrets(cause instanceof Error ? cause.message : String(cause), secrets);
  return new UpstreamError(`upstream '${upstreamName}' is unreachable at ${displayUrl(url)}: ${detail}`, "unreachable");
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
export async function readBounded(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Throwing out of the loop cancels the body.
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`response body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
