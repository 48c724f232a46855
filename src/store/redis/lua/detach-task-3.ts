import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * detach-task-3: a call parked by an MRTR round (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr,
 * SEP-2322) becomes a task the client may see. Only from working (task-rules.ts
 * TRANSITION_RULES.detach): one with a question out waits for its answer first.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel
 * Returns: {1, fields, outcome} detached; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal, or input_required)
 */
export const detachTask: LuaScript = {
  name: "detachTask",
  numberOfKeys: 3,
  lua: transitionLua(
    "detach",
    `redis.call('HDEL', KEYS[1], 'parked')
return done()`,
  ),
};
