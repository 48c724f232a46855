import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * reap-task-3: end an orphan ('end') or take it over to run its call again ('claim'), only
 * while it is non-terminal and no lease holds it — so an owner that renewed in the meantime, or
 * another reaper that got there first, wins and this changes nothing.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 mode 'end' | 'claim'; 2 now; 3 hint channel; 4 statusMessage;
 *       'end':   5 status to end in; 6 outcome JSON or ''
 *       'claim': 5 new owner; 6 lease token; 7 leaseMs
 * Returns: {1, fields, outcome} done; {-1} not found; {-2, fields, outcome} a lease holds it;
 *          {-3, fields, outcome} terminal already
 */
export const reapTask: LuaScript = {
  name: "reapTask",
  numberOfKeys: 3,
  lua: `${TASK_LUA_PRELUDE}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {-1} end
if TERMINAL[status] then local c = current(); return {-3, c[1], c[2]} end
if redis.call('EXISTS', KEYS[3]) == 1 then local c = current(); return {-2, c[1], c[2]} end
redis.call('HSET', KEYS[1], 'statusMessage', ARGV[4])
if ARGV[1] == 'claim' then
  -- The stopped run's questions died with it; the new run asks afresh under new keys.
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(f, 1, 3) == 'in:' or string.sub(f, 1, 4) == 'ans:' then redis.call('HDEL', KEYS[1], f) end
  end
  redis.call('HDEL', KEYS[1], 'upstreamRequestId')
  redis.call('HSET', KEYS[1], 'status', 'working', 'owner', ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'attempt', 1)
  redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[7])
else
  redis.call('HSET', KEYS[1], 'status', ARGV[5])
  if ARGV[6] ~= '' then redis.call('SET', KEYS[2], ARGV[6], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
end
bump(ARGV[2], ARGV[3])
local c = current()
return {1, c[1], c[2]}
`,
};
