/**
 * Lua shared by the task scripts, prepended to each (scripts cannot call one another).
 * `current()` reads the hash and the outcome; `bump()` ends every successful change.
 */
export const TASK_LUA_PRELUDE = `
local function current()
  local out = redis.call('GET', KEYS[2])
  if not out then out = '' end
  return {redis.call('HGETALL', KEYS[1]), out}
end
local function back_to_working()
  if redis.call('HGET', KEYS[1], 'status') ~= 'input_required' then return end
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(f, 1, 3) == 'in:' then return end
  end
  redis.call('HSET', KEYS[1], 'status', 'working')
end
local function bump(now, channel)
  local rev = redis.call('HINCRBY', KEYS[1], 'revision', 1)
  redis.call('HSET', KEYS[1], 'lastUpdatedAt', now)
  redis.call('PUBLISH', channel, tostring(rev))
end
`;
