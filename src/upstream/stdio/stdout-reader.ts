import type { Readable } from "node:stream";
import type { StdioUpstreamConfig } from "../../config/schema.js";
import { decodeMessage } from "../../jsonrpc/decode.js";
import type { JsonRpcMessage } from "../../jsonrpc/message.js";
import type { Logger } from "../../observability/logger.js";
import { UpstreamError } from "../connector.js";
import { failAnswered, overlongAnswerId, type RefusalHooks } from "../refused-answer.js";
import { LineSplitter, type OverlongLine } from "./line-splitter.js";

const LOGGED_PREFIX_CHARS = 200;

/**
 * The child's stdout as JSON-RPC messages, one per line (MCP stdio transport). A line over
 * `maxLineBytes`, or nested deeper than `maxJsonDepth`, is not taken: when it answers a request
 * still waiting, that request fails saying so; otherwise it is logged and skipped. A line that is
 * not a JSON-RPC message (a stray `console.log` in the server) is logged and skipped. None of
 * these stops the session.
 */
export function readMessages(
  upstream: string,
  stdout: Readable,
  config: Pick<StdioUpstreamConfig, "maxLineBytes" | "maxJsonDepth">,
  logger: Logger,
  onMessage: (message: JsonRpcMessage) => void,
  hooks: RefusalHooks,
): void {
  const { maxLineBytes, maxJsonDepth } = config;
  const onLine = (line: string): void => {
    const decoded = decodeMessage(line, { maxDepth: maxJsonDepth });
    if (decoded.ok) return onMessage(decoded.message);
    if (failAnswered(upstream, decoded, "upstreams[].stdio.maxJsonDepth", hooks)) return;
    logger.warn(
      { kind: decoded.kind, detail: decoded.detail, line: line.slice(0, LOGGED_PREFIX_CHARS) },
      "skipped a line from the upstream that is not a JSON-RPC message",
    );
  };
  const onOverlong = ({ head, tail }: OverlongLine): void => {
    const id = overlongAnswerId(head, tail);
    if (id !== undefined && hooks.isWaiting(id)) {
      const message = `upstream '${upstream}' answered with a line longer than ${maxLineBytes} bytes (upstreams[].stdio.maxLineBytes)`;
      return hooks.failRequest(id, new UpstreamError(message, "protocol"));
    }
    logger.warn({ maxLineBytes, line: head.slice(0, LOGGED_PREFIX_CHARS) }, "dropped a line from the upstream longer than maxLineBytes");
  };
  const splitter = new LineSplitter(maxLineBytes, onLine, onOverlong);
  stdout.on("data", (chunk: Buffer) => splitter.push(chunk));
  stdout.on("end", () => splitter.end());
}
