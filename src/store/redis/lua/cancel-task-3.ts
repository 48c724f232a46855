import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";
import { endingLua } from "./ending.js";

/**
 * cancel-task-3: the task is cancelled, from working or input_required (task-rules.ts
 * TRANSITION_RULES.cancel): by its owner once the call stopped, or at once by a client of the 2025-11-25 tasks
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks), which also
 * records that it asked.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 '1' records cancelRequested, or ''; 6 outcome JSON or ''; 7 a shorter ttlMs or '';
 *       8 statusMessage (absent: kept)
 * Returns: {1, fields, outcome} cancelled; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal already)
 */
export const cancelTask: LuaScript = {
  name: "cancelTask",
  numberOfKeys: 3,
  lua: transitionLua(
    "cancel",
    `if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'cancelRequested', '1') end
${endingLua("cancelled", 6)}`,
  ),
};
