import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * transition-task-3: one checked, fenced change of a task (task-rules.ts makes the same checks,
 * in the same order, for the memory store).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 allowed "from" statuses, comma-separated; 2 principal or ''; 3 lease token or '';
 *       4 now (epoch ms); 5 outcome JSON or ''; 6 hint channel; 7 N field pairs to set;
 *       8 '1' when input requests are withdrawn; 9..8+2N the pairs; the rest: fields to delete
 * Returns: {1, fields, outcome} changed; {-1} not found (or another principal's);
 *          {-2, fields, outcome} wrong status (terminal, or not in "from"); {-3, fields, outcome} stale lease
 */
export const transitionTask: LuaScript = {
  name: "transitionTask",
  numberOfKeys: 3,
  lua: `${TASK_LUA_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'principal') ~= ARGV[2] then return {-1} end
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  local c = current(); return {-3, c[1], c[2]}
end
local status = redis.call('HGET', KEYS[1], 'status')
local allowed = false
for s in string.gmatch(ARGV[1], '[^,]+') do if s == status then allowed = true end end
if status == 'completed' or status == 'failed' or status == 'cancelled' or not allowed then
  local c = current(); return {-2, c[1], c[2]}
end
local i = 9
for _ = 1, tonumber(ARGV[7]) do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]); i = i + 2 end
for k = i, #ARGV do redis.call('HDEL', KEYS[1], ARGV[k]) end
if ARGV[8] == '1' then back_to_working() end
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
bump(ARGV[4], ARGV[6])
local c = current()
return {1, c[1], c[2]}
`,
};
