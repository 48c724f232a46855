import { DEMO, FLOOR_HTTP, FLOOR_STDIO, FLOOR_TASKS_GET } from "../paths.js";
import { round, type Measurement } from "./load.js";
import { startFixture, type Launch, type Server } from "./servers.js";

/**
 * The floors: minimal relays on taskgate's own stack (hono + @hono/node-server),
 * each doing only the work no relay can skip, started in the same run as taskgate so the ratios
 * compare like with like. Each serves `POST /mcp`.
 */
export const FLOOR_LABEL = "floor:";

/** hono → the demo server over stdio (fresh id per call, reply matched by id). */
export async function startStdioFloor(launch?: Launch, childNodeArgs: string[] = []): Promise<Server> {
  const s = await startFixture("floor-stdio", FLOOR_STDIO, [process.execPath, ...childNodeArgs, DEMO], launch);
  return { ...s, url: `${s.url}/mcp` };
}

/** hono + undici keep-alive pool → an HTTP upstream, bytes forwarded. */
export async function startHttpFloor(upstreamUrl: string, launch?: Launch): Promise<Server> {
  const s = await startFixture("floor-http", FLOOR_HTTP, [upstreamUrl], launch);
  return { ...s, url: `${s.url}/mcp` };
}

/** hono + ioredis answering tasks/get for `taskId` from one Lua script (the record it writes at start). */
export async function startTasksGetFloor(redisUrl: string, taskId: string): Promise<Server> {
  const s = await startFixture("floor-tasks-get", FLOOR_TASKS_GET, [redisUrl, taskId]);
  return { ...s, url: `${s.url}/mcp` };
}

/**
 * Mark a taskgate row with its floor: throughput as a ratio (1.0 = as fast as the floor), and CPU
 * per request as a multiple of the floor's (1.0 = no work of its own above the floor).
 */
export function againstFloor(row: Measurement, floor: Measurement): Measurement {
  const cpu = row.cpuUsPerRequest !== undefined && floor.cpuUsPerRequest ? round(row.cpuUsPerRequest / floor.cpuUsPerRequest, 2) : undefined;
  row.floor = { label: floor.label, throughput: round(row.requestsPerS / floor.requestsPerS, 2), ...(cpu === undefined ? {} : { cpu }) };
  return row;
}
