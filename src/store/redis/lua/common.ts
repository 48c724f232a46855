import { TERMINAL_STATUSES } from "../../task-rules.js";

/**
 * Lua shared by the task scripts, prepended to each (scripts cannot call one another). Every
 * task script takes KEYS[1] = the task hash and KEYS[2] = its outcome.
 *
 * Return codes, the same in every task script (read in one place: task-replies.ts):
 *    1 done   -1 not found, or another principal's   -2 stale lease   -3 wrong status   -4 exists
 */
export const TASK_LUA_PRELUDE = `
-- From task-rules.ts, so both stores refuse the same changes.
local TERMINAL = {${TERMINAL_STATUSES.map((s) => `['${s}'] = true`).join(", ")}}

-- The task as stored: {hash pairs, outcome JSON or ''}.
local function current()
  local out = redis.call('GET', KEYS[2])
  if not out then out = '' end
  return {redis.call('HGETALL', KEYS[1]), out}
end

-- The stored status; nil when the task is missing or another principal's ('' = any principal).
local function visible_status(principal)
  local found = redis.call('HMGET', KEYS[1], 'status', 'principal')
  if not found[1] or (principal ~= '' and found[2] ~= principal) then return nil end
  return found[1]
end

-- An input_required task with no input request left goes back to working.
local function back_to_working()
  if redis.call('HGET', KEYS[1], 'status') ~= 'input_required' then return end
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(f, 1, 3) == 'in:' then return end
  end
  redis.call('HSET', KEYS[1], 'status', 'working')
end

-- Ends every successful change: a new revision, lastUpdatedAt, and the hint on the task's channel.
local function bump(now, channel)
  local rev = redis.call('HINCRBY', KEYS[1], 'revision', 1)
  redis.call('HSET', KEYS[1], 'lastUpdatedAt', now)
  redis.call('PUBLISH', channel, tostring(rev))
end
`;
