import { StoreUnavailableError, type EventBus } from "../contract.js";

type Handler = (message: string) => void;

/**
 * Pub/sub inside one process. Delivery is asynchronous, as it is through Redis, so code that
 * works here does not silently rely on a handler running inside `publish`.
 */
export class MemoryBus implements EventBus {
  private readonly channels = new Map<string, Set<Handler>>();
  private closed = false;

  constructor(private readonly onHandlerError: (err: unknown) => void = () => {}) {}

  async publish(channel: string, message: string): Promise<void> {
    this.assertOpen();
    const handlers = this.channels.get(channel);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      // Re-checked at delivery: an unsubscribe in between stops the message, as in Redis.
      setImmediate(() => {
        if (handlers.has(handler)) this.deliver(handler, message);
      });
    }
  }

  async subscribe(channel: string, handler: Handler): Promise<() => Promise<void>> {
    this.assertOpen();
    // A fresh function per subscription, so subscribing one handler twice needs two unsubscribes.
    const own: Handler = (message) => handler(message);
    let handlers = this.channels.get(channel);
    if (!handlers) this.channels.set(channel, (handlers = new Set()));
    handlers.add(own);
    return async () => {
      handlers.delete(own);
      if (handlers.size === 0 && this.channels.get(channel) === handlers) this.channels.delete(channel);
    };
  }

  close(): void {
    this.closed = true;
    this.channels.clear();
  }

  private deliver(handler: Handler, message: string): void {
    try {
      handler(message);
    } catch (err) {
      this.onHandlerError(err);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError(new Error("store closed"));
  }
}
