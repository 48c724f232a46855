import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * add-input-responses-2: store answers whose keys are outstanding and not answered yet; ignore the rest.
 * KEYS: 1 task hash, 2 outcome
 * ARGV: 1 principal, 2 now, 3 hint channel, 4.. key / answer JSON pairs
 * Returns: {1, accepted keys, fields, outcome}; {-1} not found (or another principal's)
 */
export const addInputResponses: LuaScript = {
  name: "addInputResponses",
  numberOfKeys: 2,
  lua: `${TASK_LUA_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HGET', KEYS[1], 'principal') ~= ARGV[1] then return {-1} end
local accepted = {}
for i = 4, #ARGV, 2 do
  local key = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], 'in:' .. key) == 1 and redis.call('HEXISTS', KEYS[1], 'ans:' .. key) == 0 then
    redis.call('HSET', KEYS[1], 'ans:' .. key, ARGV[i + 1])
    table.insert(accepted, key)
  end
end
if #accepted > 0 then bump(ARGV[2], ARGV[3]) end
local c = current()
return {1, accepted, c[1], c[2]}
`,
};
