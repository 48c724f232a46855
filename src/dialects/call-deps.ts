import type { Config, UpstreamConfig } from "../config/schema.js";
import type { TaskEngine } from "../tasks/engine.js";
import type { NativeCaller } from "../tasks/native/native-caller.js";
import type { UpstreamCaller } from "../upstream/caller.js";
import type { Relay } from "../upstream/mux/relay.js";

/** What every front that runs an upstream's tool calls is handed (the 2025-11-25 tasks, the tasks extension, task-unaware callers). */
export interface CallDeps {
  engine: TaskEngine;
  relay: Relay;
  /**
   * Who runs tools/call: the pool caller of a pooled upstream (isolation pool or per-call, stdio or
   * HTTP; it hands the call to the relay itself when an HTTP upstream keeps no sessions), else the relay.
   */
  caller?: UpstreamCaller;
  /** The bridge to the upstream's own tasks, for tools it runs as tasks. */
  native?: NativeCaller;
  upstream: UpstreamConfig;
  tasks: Config["tasks"];
}
