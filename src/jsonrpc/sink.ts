import type { JsonRpcMessage } from "./message.js";

/** Where messages related to one request go (progress, server→client requests, the response). */
export interface MessageSink {
  /** False when it cannot be delivered (client accepts no SSE, went away, or the wire has no such message). */
  send(message: JsonRpcMessage): boolean;
}
