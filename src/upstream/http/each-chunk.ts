import { Readable } from "node:stream";

/**
 * Hands every chunk of `body` to `onChunk`, resolving at its end. A Node stream (undici's body)
 * is read by its events: its async iterator made a promise per chunk and set up a stream
 * `finished` watch per response (docs/contributing/performance.md#reading-an-upstream-body). A web
 * stream is iterated. Rejects when the body breaks, or with what `onChunk` threw, after
 * cancelling the body, as leaving a `for await` loop does.
 */
export function eachChunk(body: AsyncIterable<Uint8Array>, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  return body instanceof Readable ? readEvents(body, onChunk) : iterate(body, onChunk);
}

async function iterate(body: AsyncIterable<Uint8Array>, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  for await (const chunk of body) onChunk(chunk);
}

function readEvents(body: Readable, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  if (body.readableEnded) return Promise.resolve();
  if (body.destroyed) return Promise.reject(body.errored ?? prematureClose());
  return new Promise((resolve, reject) => {
    const done = (err?: unknown) => {
      body.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onData = (chunk: Uint8Array) => {
      try {
        onChunk(chunk);
      } catch (err) {
        done(err);
        body.destroy();
      }
    };
    const onEnd = () => done();
    const onError = (err: Error) => done(err);
    // Closed before its end without an error: the connection broke (as `for await` says it).
    const onClose = () => done(body.errored ?? prematureClose());
    body.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}
