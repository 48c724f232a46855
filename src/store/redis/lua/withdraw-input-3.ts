import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * withdraw-input-3: questions nobody answered in time are withdrawn; an input_required task with
 * none left goes back to working. From any non-terminal status (task-rules.ts
 * TRANSITION_RULES["withdraw-input"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5.. keys of the input requests withdrawn
 * Returns: {1, fields, outcome} withdrawn; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const withdrawInput: LuaScript = {
  name: "withdrawInput",
  numberOfKeys: 3,
  lua: transitionLua(
    "withdraw-input",
    `for i = 5, #ARGV do redis.call('HDEL', KEYS[1], 'in:' .. ARGV[i]) end
back_to_working()
return done()`,
  ),
};
