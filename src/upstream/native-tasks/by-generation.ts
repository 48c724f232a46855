import type { JsonRpcRequest } from "../../jsonrpc/message.js";
import type { UpstreamConnector } from "../connector.js";
import { offersTasksExtension } from "./tasks-extension.js";
import type {
  NativeSupport,
  StartOptions,
  UpstreamStart,
  UpstreamTaskClient,
  UpstreamTaskEvents,
  UpstreamTaskLink,
  UpstreamTaskRef,
  UpstreamTasks,
} from "./upstream-tasks.js";

/**
 * The upstream's own tasks in the task protocol of the generation negotiated with it, chosen at each
 * use: the upstream may come back from a restart speaking the other one. A 2026-07-28
 * upstream that lists `io.modelcontextprotocol/tasks` is followed through the extension; any
 * other through the 2025-11-25 tasks utility (which declines when the session has no tasks).
 */
export class TasksByGeneration implements UpstreamTasks {
  constructor(
    private readonly connector: UpstreamConnector,
    private readonly legacy: UpstreamTasks,
    private readonly extension: UpstreamTasks,
  ) {}

  get generation(): UpstreamTasks["generation"] {
    return this.current().generation;
  }

  get durable(): boolean {
    return this.current().durable;
  }

  support(tool: string): Promise<NativeSupport | undefined> {
    return this.current().support(tool);
  }

  supportNow(tool: string): NativeSupport | undefined | "unknown" {
    const current = this.current();
    return current.supportNow ? current.supportNow(tool) : "unknown";
  }

  start(client: UpstreamTaskClient, request: JsonRpcRequest, options: StartOptions, events: UpstreamTaskEvents): Promise<UpstreamStart> {
    return this.current().start(client, request, options, events);
  }

  /** A stored ref is followed in the task protocol the upstream speaks now: an extension task carries no session. */
  attach(client: UpstreamTaskClient, ref: UpstreamTaskRef, events: UpstreamTaskEvents): UpstreamTaskLink {
    return this.current().attach(client, ref, events);
  }

  private current(): UpstreamTasks {
    return offersTasksExtension(this.connector) ? this.extension : this.legacy;
  }
}
