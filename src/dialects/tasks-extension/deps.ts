import type { CallDeps } from "../call-deps.js";
import type { RequestStateCodec } from "../../tasks/request-state.js";
import { TASKS_EXTENSION } from "../modern/wire.js";
import type { Unaware } from "../unaware/unaware.js";

export interface TasksExtensionDeps extends CallDeps {
  /** Signs and checks MRTR requestState (one key shared by every replica). */
  requestState: RequestStateCodec;
  /** limits.maxInputResponsesBytes: the largest inputResponses (tasks/update, MRTR retry) taken. */
  maxInputResponsesBytes: number;
  /** tasks.unawareClients: handle: callers without the extension, through the gateway tools. */
  unaware?: Unaware;
}

export const REQUIRED_CAPABILITIES = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
