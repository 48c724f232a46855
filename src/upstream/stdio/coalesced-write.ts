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

/**
 * Resolves once `stream` takes more writes (its buffer fell under its high-water mark), or it
 * closed, or `gone` settled (the child exited): the caller then writes, or finds it cannot.
 */
export function whenDrained(stream: Writable, gone: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done).off("close", done);
      resolve();
    };
    stream.on("drain", done).on("close", done);
    void gone.then(done);
  });
}
