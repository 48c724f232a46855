import type { Config, UpstreamConfig } from "../../config/schema.js";
import type { UpstreamCaller } from "../../upstream/caller.js";
import type { NativeCaller } from "../../tasks/native/native-caller.js";
import type { TaskEngine } from "../../tasks/engine.js";
import type { RequestStateCodec } from "../../tasks/request-state.js";
import type { Relay } from "../../upstream/mux/relay.js";
import { TASKS_EXTENSION } from "../modern/wire.js";
import type { Unaware } from "../unaware/unaware.js";

export interface TasksExtensionDeps {
  engine: TaskEngine;
  relay: Relay;
  /** Who runs tools/call: the pool of a pooled stdio upstream (isolation pool or per-call), else the relay. */
  caller?: UpstreamCaller;
  /** The bridge to the upstream's own tasks, for tools it runs as tasks. */
  native?: NativeCaller;
  upstream: UpstreamConfig;
  tasks: Config["tasks"];
  /** Signs and checks MRTR requestState (one key shared by every replica). */
  requestState: RequestStateCodec;
  /** limits.maxInputResponsesBytes: the largest inputResponses (tasks/update, MRTR retry) taken. */
  maxInputResponsesBytes: number;
  /** tasks.unawareClients: handle: callers without the extension, through the gateway tools. */
  unaware?: Unaware;
}

export const REQUIRED_CAPABILITIES = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
