import type { Readable } from "node:stream";
import { decodeMessage } from "../../jsonrpc/decode.js";
import type { JsonRpcMessage } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import { LineSplitter } from "./line-splitter.js";

const LOGGED_PREFIX_CHARS = 200;

/**
 * The child's stdout as JSON-RPC messages, one per line (MCP stdio transport). A line over
 * `maxLineBytes` is dropped whole with a warning; a line that is not a JSON-RPC message (a stray
 * `console.log` in the server) is logged and skipped. Neither stops the session.
 */
export function readMessages(stdout: Readable, maxLineBytes: number, logger: Logger, onMessage: (message: JsonRpcMessage) => void): void {
  const onLine = (line: string): void => {
    const decoded = decodeMessage(line);
    if (decoded.ok) return onMessage(decoded.message);
    logger.warn(
      { kind: decoded.kind, detail: decoded.detail, line: line.slice(0, LOGGED_PREFIX_CHARS) },
      "skipped a line from the upstream that is not a JSON-RPC message",
    );
  };
  const onOverlong = (): void => logger.warn({ maxLineBytes }, "dropped a line from the upstream longer than maxLineBytes");
  const splitter = new LineSplitter(maxLineBytes, onLine, onOverlong);
  stdout.on("data", (chunk: Buffer) => splitter.push(chunk));
  stdout.on("end", () => splitter.end());
}
