import { ResponseBody } from "./exchange.js";

/** A body to read: an upstream's, or any iterable of bytes. */
export type ChunkSource = ResponseBody | AsyncIterable<Uint8Array>;

/**
 * Hands every chunk of `body` to `onChunk`, resolving at its end. An upstream's body (a
 * ResponseBody) hands its chunks over as undici parses them; any other is iterated. Rejects when
 * the body breaks, or with what `onChunk` threw, after cancelling the body, as leaving a
 * `for await` loop does.
 */
export function eachChunk(body: ChunkSource, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  return body instanceof ResponseBody ? body.read(onChunk) : iterate(body, onChunk);
}

async function iterate(body: AsyncIterable<Uint8Array>, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  for await (const chunk of body) onChunk(chunk);
}
