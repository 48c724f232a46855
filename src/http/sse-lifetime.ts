import { carryTag } from "../wire/reply-outcome.js";

/** True for a reply that streams (SSE); checked by header first, see `whenStreamEnds`. */
export function isEventStream(response: Response): boolean {
  // Content type first: reading `body` of @hono/node-server's light Response turns it into a
  // full web Response, which then takes the slow streamed write path for every plain reply.
  return (response.headers.get("content-type") ?? "").startsWith("text/event-stream") && response.body !== null;
}

/**
 * The same SSE reply, calling `ended` once when its body ends, fails, or the client goes away.
 * One wrapper for everything that counts open streams (metrics, per-caller limits).
 */
export function whenStreamEnds(response: Response, ended: () => void): Response {
  const reader = response.body!.getReader();
  let open = true;
  const end = () => {
    if (open) ended();
    open = false;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        end();
        controller.error(err);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return carryTag(response, new Response(body, { status: response.status, headers: response.headers }));
}

/**
 * The same SSE reply, holding at most `maxBytes` the client has not taken yet. Every message is
 * taken from the reply as it is written and queued here, where the bytes are counted; a client
 * that reads slower than the reply is written falls behind, and once `maxBytes` wait, the next
 * message closes the stream (the connection is cut, so the client sees it) instead of growing the
 * queue. One message larger than the bound still goes out on a stream that holds nothing else.
 */
export function withSendBudget(response: Response, maxBytes: number, overflowed: () => void): Response {
  const reader = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        void (async () => {
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return controller.close();
              if ((controller.desiredSize ?? 0) <= 0) {
                overflowed();
                controller.error(new Error(`the client fell ${maxBytes} bytes behind this stream`));
                return await reader.cancel();
              }
              controller.enqueue(value);
            }
          } catch (err) {
            controller.error(err);
          }
        })();
      },
      async cancel(reason) {
        await reader.cancel(reason);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBytes }),
  );
  return carryTag(response, new Response(body, { status: response.status, headers: response.headers }));
}
