import { GatewayError } from "../wire/errors.js";

/**
 * limits.maxInputResponsesBytes: answers to the upstream's questions are stored in the task
 * until delivered, so their size is bounded like a request body is (design: Security).
 */
export function checkInputSize(value: unknown, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
  if (bytes > maxBytes)
    throw new GatewayError("invalid_params", `the answers are ${bytes} bytes, over the limit of ${maxBytes} (limits.maxInputResponsesBytes)`);
}
