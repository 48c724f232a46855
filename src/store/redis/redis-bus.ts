import type { Logger } from "pino";
import { StoreUnavailableError, type EventBus } from "../contract.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

type Handler = (message: string) => void;

/** One Redis SUBSCRIBE per channel, shared by every local handler of that channel. */
interface Channel {
  handlers: Set<Handler>;
  subscribed: Promise<void>;
}

export interface RedisBusDeps {
  publisher: RedisConnection;
  /** Called at most once, on the first subscribe: a process that only publishes needs no second connection. */
  openSubscriber: () => RedisConnection;
  keys: RedisKeys;
  logger?: Logger;
}

/**
 * Pub/sub over Redis. A subscribing connection can do nothing else, hence its own. ioredis
 * re-subscribes after a reconnect; what was published meanwhile is lost, which is fine because
 * messages are only hints (readers re-read the store).
 */
export class RedisBus implements EventBus {
  private subscriber: RedisConnection | undefined;
  private readonly channels = new Map<string, Channel>();
  private closed = false;

  constructor(private readonly deps: RedisBusDeps) {}

  async publish(channel: string, message: string): Promise<void> {
    await this.deps.publisher.call((c) => c.publish(this.deps.keys.channel(channel), message));
  }

  async subscribe(channel: string, handler: Handler): Promise<() => Promise<void>> {
    const name = this.deps.keys.channel(channel);
    const entry = this.channels.get(name) ?? this.open(name);
    // A fresh function per subscription, so subscribing one handler twice needs two unsubscribes.
    const own: Handler = (message) => handler(message);
    entry.handlers.add(own);
    try {
      await entry.subscribed;
    } catch (err) {
      entry.handlers.delete(own);
      throw err;
    }
    return () => this.unsubscribe(name, entry, own);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    await this.subscriber?.close();
  }

  private open(name: string): Channel {
    const subscriber = this.connection();
    const entry: Channel = { handlers: new Set(), subscribed: subscriber.call(async (c) => void (await c.subscribe(name))) };
    this.channels.set(name, entry);
    entry.subscribed.catch(() => {
      if (this.channels.get(name) === entry) this.channels.delete(name);
    });
    return entry;
  }

  /** Never rejects: the handler is gone locally at once, whatever Redis says. */
  private async unsubscribe(name: string, entry: Channel, handler: Handler): Promise<void> {
    if (!entry.handlers.delete(handler) || entry.handlers.size > 0) return;
    if (this.channels.get(name) !== entry) return;
    this.channels.delete(name);
    try {
      await this.subscriber?.call((c) => c.unsubscribe(name));
    } catch (err) {
      // Left subscribed in Redis: its messages find no handler and are dropped.
      this.deps.logger?.debug({ err, channel: name }, "unsubscribe not confirmed by redis");
    }
  }

  private connection(): RedisConnection {
    if (this.closed) throw new StoreUnavailableError(new Error("store closed"));
    if (!this.subscriber) {
      this.subscriber = this.deps.openSubscriber();
      this.subscriber.client.on("message", (channel: string, message: string) => this.dispatch(channel, message));
    }
    return this.subscriber;
  }

  private dispatch(channel: string, message: string): void {
    for (const handler of [...(this.channels.get(channel)?.handlers ?? [])]) {
      try {
        handler(message);
      } catch (err) {
        this.deps.logger?.error({ err, channel }, "event bus handler threw");
      }
    }
  }
}
