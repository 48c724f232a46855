import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * request-cancel-3: a tasks-extension client asks for the task to be cancelled
 * (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md);
 * the owner, hinted on its channel and flagged for it (taken by its next lease renewal), reads
 * cancelRequested and stops the call. The status stays;
 * any non-terminal one (task-rules.ts TRANSITION_RULES["request-cancel"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel
 * Returns: {1, fields, outcome} recorded; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const requestCancel: LuaScript = {
  name: "requestCancel",
  numberOfKeys: 3,
  lua: transitionLua(
    "request-cancel",
    `redis.call('HSET', KEYS[1], 'cancelRequested', '1')
return done()`,
  ),
};
