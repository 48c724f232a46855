import type { UpstreamConfig } from "../../config/schema.js";
import { NativeCaller } from "../../tasks/native/native-caller.js";
import { ToolHints } from "../../tasks/tool-hints.js";
import { TasksByGeneration } from "../../upstream/native-tasks/by-generation.js";
import { Tasks2025 } from "../../upstream/native-tasks/tasks-2025.js";
import { ExtensionTasks } from "../../upstream/native-tasks/tasks-extension.js";
import type { Relay } from "../../upstream/mux/relay.js";

/**
 * The bridge to an upstream's own tasks: the 2025-11-25 tasks utility over its relay, or,
 * for a 2026-07-28 upstream that offers it, the io.modelcontextprotocol/tasks extension.
 * `hints` is the upstream's tools/list as read once for everyone (task support, annotations),
 * read again when the upstream says its tools changed. An HTTP upstream's tasks outlive this
 * replica; a stdio child's die with it.
 */
export function nativeTasks(u: UpstreamConfig, relay: Relay, clock: () => number): { native: NativeCaller; hints: ToolHints } {
  const hints = new ToolHints(relay, clock);
  relay.listChanged.on((kind) => {
    if (kind === "tools") hints.invalidate();
  });
  const legacy = new Tasks2025({
    channel: relay,
    capabilities: () => relay.connector.initializeResult()?.capabilities,
    session: () => relay.connector.session(),
    toolSupport: (tool) => hints.taskSupport(tool).catch(() => undefined),
    toolSupportNow: (tool) => hints.taskSupportNow(tool),
    onStatus: (listener) => (relay.onTaskStatus = listener),
    durable: u.http !== undefined,
  });
  const tasks = new TasksByGeneration(relay.connector, legacy, new ExtensionTasks(relay.connector, u.http !== undefined));
  return { native: new NativeCaller(relay, tasks, clock), hints };
}
