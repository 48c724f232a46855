import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * set-status-message-3: the call's progress as the task's statusMessage, or none. The status
 * stays; any non-terminal one (task-rules.ts TRANSITION_RULES["set-status-message"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 the statusMessage (absent: cleared)
 * Returns: {1, fields, outcome} written; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const setStatusMessage: LuaScript = {
  name: "setStatusMessage",
  numberOfKeys: 3,
  lua: transitionLua(
    "set-status-message",
    `if ARGV[5] then redis.call('HSET', KEYS[1], 'statusMessage', ARGV[5]) else redis.call('HDEL', KEYS[1], 'statusMessage') end
return done()`,
  ),
};
