import type { LuaScript } from "../scripts.js";
import { luaStatus, transitionLua } from "./common.js";

/**
 * start-input-3: the upstream asked the client something during a detached call; the question is
 * stored as `in:<key>` and the task is input_required, from working, or still input_required with
 * another question out (task-rules.ts TRANSITION_RULES["start-input"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5.. key / input request JSON pairs
 * Returns: {1, fields, outcome} asked; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const startInput: LuaScript = {
  name: "startInput",
  numberOfKeys: 3,
  lua: transitionLua(
    "start-input",
    `redis.call('HSET', KEYS[1], 'status', ${luaStatus("input_required")})
for i = 5, #ARGV - 1, 2 do redis.call('HSET', KEYS[1], 'in:' .. ARGV[i], ARGV[i + 1]) end
return done()`,
  ),
};
