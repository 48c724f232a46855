/**
 * JSON-RPC 2.0 framing shared by every MCP protocol revision (https://modelcontextprotocol.io/specification/2025-11-25/basic).
 * Shapes only; decoding of untrusted input lives in `decode.ts`.
 */
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: Record<string, unknown>;
}

export interface JsonRpcFailure {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => "method" in m && "id" in m && m.id !== undefined && m.id !== null;

export const isNotification = (m: JsonRpcMessage): m is JsonRpcNotification => "method" in m && !("id" in m && m.id !== undefined && m.id !== null);

export const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => !("method" in m) && ("result" in m || "error" in m);

export const isFailure = (m: JsonRpcResponse): m is JsonRpcFailure => "error" in m;

export function success(id: JsonRpcId, result: Record<string, unknown>): JsonRpcSuccess {
  return { jsonrpc: "2.0", id, result };
}

export function failure(id: JsonRpcId | null, error: JsonRpcErrorObject): JsonRpcFailure {
  return { jsonrpc: "2.0", id, error };
}
