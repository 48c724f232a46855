import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * transition-task-3: one checked, fenced change of a task. The checks run in the order of
 * refuseChange (task-rules.ts), which makes the same ones for the memory store.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 allowed "from" statuses, comma-separated; 2 principal or '' (any); 3 lease token or ''
 *       (unfenced); 4 now (epoch ms); 5 outcome JSON or ''; 6 hint channel; 7 N field pairs to
 *       set; 8 '1' when input requests are withdrawn; 9 a shorter ttlMs or ''; 10..9+2N the pairs;
 *       the rest: fields to delete
 * Returns: {1, fields, outcome} changed; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal, or not in "from")
 */
export const transitionTask: LuaScript = {
  name: "transitionTask",
  numberOfKeys: 3,
  lua: `${TASK_LUA_PRELUDE}
local status = visible_status(ARGV[2])
if not status then return {-1} end
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  local c = current(); return {-2, c[1], c[2]}
end
local allowed = false
for s in string.gmatch(ARGV[1], '[^,]+') do if s == status then allowed = true end end
if TERMINAL[status] or not allowed then
  local c = current(); return {-3, c[1], c[2]}
end
local i = 10
for _ = 1, tonumber(ARGV[7]) do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]); i = i + 2 end
for k = i, #ARGV do redis.call('HDEL', KEYS[1], ARGV[k]) end
if ARGV[8] == '1' then back_to_working() end
if ARGV[9] ~= '' and tonumber(ARGV[9]) < tonumber(redis.call('HGET', KEYS[1], 'ttlMs')) then
  local at = string.format('%.0f', tonumber(redis.call('HGET', KEYS[1], 'createdAt')) + tonumber(ARGV[9]))
  redis.call('HSET', KEYS[1], 'ttlMs', ARGV[9], 'expiresAt', at)
  redis.call('PEXPIREAT', KEYS[1], at)
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIREAT', KEYS[2], at) end
end
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
bump(ARGV[4], ARGV[6])
local c = current()
return {1, c[1], c[2]}
`,
};
