import type { JsonRpcNotification } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";

/**
 * Front sessions' standing streams on this replica (their GET streams) and the resources each
 * session subscribed to. The upstream session is shared by every front session, so the upstream
 * sees one subscription per URI; this keeps each front session's own view and fans
 * `notifications/resources/updated` out only to the sessions that asked.
 */
export class SessionStreams {
  private readonly streams = new Map<string, MessageSink>();
  private readonly subscriptions = new Map<string, Set<string>>(); // uri → session ids

  /** Returns false when the session already has a stream here (the spec allows one). */
  attach(sessionId: string, sink: MessageSink): boolean {
    if (this.streams.has(sessionId)) return false;
    this.streams.set(sessionId, sink);
    return true;
  }

  detach(sessionId: string, sink: MessageSink): void {
    if (this.streams.get(sessionId) === sink) this.streams.delete(sessionId);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  broadcast(message: JsonRpcNotification): void {
    for (const sink of this.streams.values()) sink.send(message);
  }

  sendTo(sessionId: string, message: JsonRpcNotification): boolean {
    return this.streams.get(sessionId)?.send(message) ?? false;
  }

  subscribe(sessionId: string, uri: string): void {
    const sessions = this.subscriptions.get(uri) ?? new Set<string>();
    sessions.add(sessionId);
    this.subscriptions.set(uri, sessions);
  }

  /** Removes the session's subscription; true when no other session still holds the URI. */
  unsubscribe(sessionId: string, uri: string): boolean {
    const sessions = this.subscriptions.get(uri);
    sessions?.delete(sessionId);
    if (sessions && sessions.size > 0) return false;
    this.subscriptions.delete(uri);
    return true;
  }

  /** Whether another session than `sessionId` holds a subscription to `uri`. */
  heldByOthers(sessionId: string, uri: string): boolean {
    const sessions = this.subscriptions.get(uri);
    return !!sessions && [...sessions].some((s) => s !== sessionId);
  }

  toSubscribers(uri: string, message: JsonRpcNotification): void {
    for (const sessionId of this.subscriptions.get(uri) ?? []) this.sendTo(sessionId, message);
  }

  /** Forget a session, closing its stream; returns the URIs nobody holds any more (to unsubscribe upstream). */
  drop(sessionId: string): string[] {
    const stream = this.streams.get(sessionId);
    this.streams.delete(sessionId);
    if (stream && "close" in stream && typeof stream.close === "function") stream.close();
    const released: string[] = [];
    for (const uri of [...this.subscriptions.keys()]) if (this.unsubscribeIfHeld(sessionId, uri)) released.push(uri);
    return released;
  }

  /** Sessions holding a stream or a subscription here. */
  heldSessions(): Set<string> {
    const sessions = new Set<string>(this.streams.keys());
    for (const ids of this.subscriptions.values()) for (const id of ids) sessions.add(id);
    return sessions;
  }

  subscribedUris(): string[] {
    return [...this.subscriptions.keys()];
  }

  private unsubscribeIfHeld(sessionId: string, uri: string): boolean {
    return this.subscriptions.get(uri)?.has(sessionId) ? this.unsubscribe(sessionId, uri) : false;
  }
}
