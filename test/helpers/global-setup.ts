import type { TestProject } from "vitest/node";
import { startRedis } from "./redis.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** One real redis-server for the whole run; tests isolate themselves by key prefix. */
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedis();
  project.provide("redisUrl", redis.url);
  return () => redis.stop();
}
