import { UpstreamError } from "../connector.js";

const SNIPPET_CHARS = 300;

/** The URL for messages and logs: credentials in it stay out of both. */
export function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}

/** fetch says only "fetch failed"; the cause (ECONNREFUSED, ENOTFOUND, ...) is what helps. */
export function unreachable(upstreamName: string, url: string, err: unknown): UpstreamError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new UpstreamError(`upstream '${upstreamName}' is unreachable at ${displayUrl(url)}: ${detail}`, "unreachable");
}

export function badStatus(upstreamName: string, method: string, status: number, body: string): UpstreamError {
  const snippet = body.trim().slice(0, SNIPPET_CHARS);
  return new UpstreamError(`upstream '${upstreamName}' answered HTTP ${status} to ${method}${snippet ? `: ${snippet}` : ""}`, "protocol");
}

/**
 * Our own error about an upstream answer quotes its body (a 401 page may echo the credential it
 * refused); credentials sent with the request are cut out, whole or as the token after the
 * scheme, so they reach neither a client nor a stored task's error.
 */
export function withoutCredentials(err: unknown, sent: Iterable<string>): unknown {
  if (!(err instanceof UpstreamError)) return err;
  const secrets = [...sent].flatMap((value) => [value, value.trim().split(/\s+/).at(-1) ?? ""]).filter((s) => s.length >= 4);
  const message = secrets.reduce((text, secret) => text.split(secret).join("[redacted]"), err.message);
  return message === err.message ? err : new UpstreamError(message, err.reason);
}

/** A body read to its end, but never more than `maxBytes` of it. */
export async function readBounded(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Throwing out of the loop cancels the body.
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`the body is longer than ${maxBytes} bytes (upstreams[].http.maxMessageBytes)`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
