import type { JsonRpcNotification } from "../../jsonrpc/message.js";

export type ListKind = "tools" | "prompts" | "resources";

const KINDS: Record<string, ListKind> = {
  "notifications/tools/list_changed": "tools",
  "notifications/prompts/list_changed": "prompts",
  "notifications/resources/list_changed": "resources",
};

/** Which list a notification says changed, if it is a list-changed notification. */
export function listChangedKind(method: string): ListKind | undefined {
  return Object.hasOwn(KINDS, method) ? KINDS[method] : undefined;
}

export type ListChangedListener = (kind: ListKind, message: JsonRpcNotification) => void;

/**
 * The upstream's list-changed notifications, for whoever follows them on this replica: the
 * 2026-07-28 `subscriptions/listen` streams that asked for them, and the cache of tools'
 * `x-mcp-header` declarations. One per upstream, shared by its relay and per-call relays, since a
 * list may change in any of its processes.
 */
export class ListChangedHub {
  private readonly listeners = new Set<ListChangedListener>();

  /** Returns the function that stops listening. */
  on(listener: ListChangedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True when the message was a list-changed notification (and was passed on). */
  emit(message: JsonRpcNotification): boolean {
    const kind = listChangedKind(message.method);
    if (kind === undefined) return false;
    for (const listener of this.listeners) listener(kind, message);
    return true;
  }
}
