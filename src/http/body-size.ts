import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";

/**
 * The POST body size limit, around the step that reads the body. A body that declares its length
 * (every MCP client sends Content-Length) is judged by the header alone, so the request is never
 * turned into a full web `Request` with a body stream and an abort signal just to be measured —
 * that cost more than the rest of a small request's handling. Chunked bodies go through hono's
 * `bodyLimit`, which counts the bytes as they arrive. The outcome is the same in both cases: 413
 * as soon as the limit is passed.
 */
export function bodySizeLimit(
  maxBytes: number,
  onTooLarge: (c: Context) => Response,
): (c: Context, read: () => Promise<Response>) => Response | Promise<Response> {
  const counting = bodyLimit({ maxSize: maxBytes, onError: onTooLarge });
  return (c, read) => {
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return countThen(counting, c, read);
    // The node HTTP parser has already refused a malformed Content-Length.
    if (Number.parseInt(length, 10) > maxBytes) return onTooLarge(c);
    return read();
  };
}

async function countThen(counting: ReturnType<typeof bodyLimit>, c: Context, read: () => Promise<Response>): Promise<Response> {
  const refused = await counting(c, async () => {
    c.res = await read();
  });
  return refused instanceof Response ? refused : c.res;
}
