import type { Writable } from "node:stream";

const corked = new WeakSet<Writable>();

/**
 * Writes `text` to a child's stdin, sharing one write system call with every other message written
 * in the same turn of the event loop. Under load, many front requests are read in one turn; one
 * pipe write per message was a large part of a relayed call's cost. The stream is corked at the
 * first write of a turn and uncorked once the turn's I/O callbacks have run (setImmediate), so a
 * lone message waits no longer than that turn. Order is kept: corking only delays the flush.
 */
export function coalescedWrite(stream: Writable, text: string, done: (err?: Error | null) => void): void {
  if (!corked.has(stream)) {
    corked.add(stream);
    stream.cork();
    setImmediate(() => {
      corked.delete(stream);
      stream.uncork();
    });
  }
  stream.write(text, done);
}

/** Writes waiting for a stream to take more, in the order they came. */
const waiting = new WeakMap<Writable, Array<{ write: () => void; gone: () => void }>>();

/**
 * Runs `write` now when `stream` takes more (its buffer is under its high-water mark and nothing
 * waits before it); otherwise once it has drained, in turn, one 'drain' listener per stream
 * whatever the number of writers. `gone` instead, when the stream closes first.
 */
export function whenWritable(stream: Writable, write: () => void, gone: () => void): void {
  const queue = waiting.get(stream);
  if (!queue && !stream.writableNeedDrain) return write();
  if (queue) return void queue.push({ write, gone });
  const waiters = [{ write, gone }];
  waiting.set(stream, waiters);
  const flush = () => {
    while (waiters.length > 0 && !stream.writableNeedDrain) waiters.shift()!.write();
    if (waiters.length > 0) return;
    waiting.delete(stream);
    stream.off("drain", flush).off("close", close);
  };
  const close = () => {
    waiting.delete(stream);
    stream.off("drain", flush).off("close", close);
    for (const waiter of waiters.splice(0)) waiter.gone();
  };
  stream.on("drain", flush).on("close", close);
}
