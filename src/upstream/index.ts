import type { UpstreamConfig } from "../config/schema.js";
import type { Logger } from "../observability/logger.js";
import type { UpstreamConnector } from "./connector.js";
import { HttpConnector } from "./http/http-connector.js";
import { StdioConnector } from "./stdio/stdio-connector.js";

export type { UpstreamConnector } from "./connector.js";

/** The connector for one configured upstream; the schema guarantees exactly one of stdio / http. */
export function createConnector(config: UpstreamConfig, logger: Logger): UpstreamConnector {
  if (config.stdio) {
    if (config.stdio.inheritEnv === "all")
      logger.warn(
        "stdio.inheritEnv: all: this upstream's processes get taskgate's whole environment (all but TASKGATE_*), secrets of other upstreams included; list the names it needs instead",
      );
    return new StdioConnector(config.name, config.stdio, logger, config.generation);
  }
  if (config.http) return new HttpConnector(config.name, config.http, logger, config.generation);
  throw new Error(`upstream '${config.name}' has neither stdio nor http`);
}
