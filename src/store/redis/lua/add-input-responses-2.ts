import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * add-input-responses-2: store the answers whose keys are outstanding (an `in:<key>` and no
 * `ans:<key>` yet) and ignore the rest, so a retried tasks/update changes nothing. A terminal
 * task accepts none: it never changes.
 * KEYS: 1 task hash, 2 outcome
 * ARGV: 1 principal, 2 now, 3 hint channel, 4.. key / answer JSON pairs
 * Returns: {1, accepted keys, fields, outcome} (the revision moves only when a key was accepted);
 *          {-1} not found (or another principal's)
 */
export const addInputResponses: LuaScript = {
  name: "addInputResponses",
  numberOfKeys: 2,
  lua: `${TASK_LUA_PRELUDE}
local status = visible_status(ARGV[1])
if not status then return {-1} end
local accepted = {}
if not TERMINAL[status] then
  for i = 4, #ARGV - 1, 2 do
    local key = ARGV[i]
    if redis.call('HEXISTS', KEYS[1], 'in:' .. key) == 1 and redis.call('HSETNX', KEYS[1], 'ans:' .. key, ARGV[i + 1]) == 1 then
      table.insert(accepted, key)
    end
  end
end
if #accepted > 0 then bump(ARGV[2], ARGV[3]) end
local c = current()
return {1, accepted, c[1], c[2]}
`,
};
