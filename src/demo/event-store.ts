import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Events kept at most, all streams together; the oldest go first. */
export const MAX_EVENTS = 10_000;

/**
 * The demo's event store (`--event-store`): every SSE event gets an id, and a client that lost a
 * stream resumes it with `Last-Event-ID`, the events after that id replayed
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports, Resumability and
 * Redelivery). In memory and bounded, unlike the SDK's example store: it lives as long as the
 * server process, and an id it no longer holds is refused (HTTP 400), never answered with an
 * empty stream. Ids are `<stream>_<sequence>`, in the order the events were stored.
 */
export class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private sequence = 0;

  constructor(private readonly maxEvents = MAX_EVENTS) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${String(++this.sequence).padStart(12, "0")}`;
    this.events.set(eventId, { streamId, message });
    if (this.events.size > this.maxEvents) this.events.delete(this.events.keys().next().value as string);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  /** A Map iterates in insertion order: the stream's events after `lastEventId`, as they were stored. */
  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.events.get(lastEventId);
    if (!last) throw new Error(`event ${lastEventId} is not held (any more)`);
    let after = false;
    for (const [eventId, event] of [...this.events]) {
      if (after && event.streamId === last.streamId) await send(eventId, event.message);
      if (eventId === lastEventId) after = true;
    }
    return last.streamId;
  }
}
