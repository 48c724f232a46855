import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * take-input-responses-3: the owner takes the waiting answers; their requests are done, and an
 * input_required task with none left goes back to working.
 * Each answer taken is kept as `took:<key>`, and returned again while the owner still says it
 * waits for that key (ARGV 4..): a take whose reply was lost is retried without losing it.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 lease token, 2 now, 3 hint channel, 4.. keys the owner still waits for
 * Returns: {1, key / answer JSON pairs, fields, outcome} (the revision moves only when something
 *          was taken); {-1} not found; {-2} stale lease
 */
export const takeInputResponses: LuaScript = {
  name: "takeInputResponses",
  numberOfKeys: 3,
  lua: `${TASK_LUA_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {-2} end
local taken = {}
local seen = {}
local moved = false
for i = 4, #ARGV do
  local again = redis.call('HGET', KEYS[1], 'took:' .. ARGV[i])
  if again then table.insert(taken, ARGV[i]); table.insert(taken, again); seen[ARGV[i]] = true end
end
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local f = fields[i]
  if string.sub(f, 1, 4) == 'ans:' then
    local key = string.sub(f, 5)
    if not seen[key] then table.insert(taken, key); table.insert(taken, fields[i + 1]) end
    redis.call('HSET', KEYS[1], 'took:' .. key, fields[i + 1])
    redis.call('HDEL', KEYS[1], f, 'in:' .. key)
    moved = true
  end
end
if moved then back_to_working(); bump(ARGV[2], ARGV[3]) end
local c = current()
return {1, taken, c[1], c[2]}
`,
};
