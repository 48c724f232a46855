import type { TaskStatus } from "../../contract.js";
import { TERMINAL_STATUSES, TRANSITION_RULES, type TransitionRule } from "../../task-rules.js";

/** A status as a Lua string literal, checked against TaskStatus: no status name is typed into Lua. */
export const luaStatus = (status: TaskStatus): string => `'${status}'`;

/** A Lua set of statuses: `{['working'] = true, ...}`. */
export const luaStatusSet = (statuses: readonly TaskStatus[]): string => `{${statuses.map((s) => `[${luaStatus(s)}] = true`).join(", ")}}`;

/**
 * The store's own clock, for the replica leases' scripts: `now` in epoch ms and `ms(x)`, a time as
 * the integer string a sorted-set score is written with (a Lua number would print as 1.7e+12).
 */
export const STORE_CLOCK_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function ms(x) return string.format('%.0f', x) end
`;

/**
 * Lua shared by the task scripts, prepended to each (scripts cannot call one another). Every
 * task script takes KEYS[1] = the task hash and KEYS[2] = its outcome.
 *
 * Return codes, the same in every task script (read in one place: task-replies.ts):
 *    1 done   -1 not found, or another principal's   -2 stale lease   -3 wrong status   -4 exists
 */
export const TASK_LUA_PRELUDE = `
-- From task-rules.ts, so both stores refuse the same changes.
local TERMINAL = ${luaStatusSet(TERMINAL_STATUSES)}

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
  if redis.call('HGET', KEYS[1], 'status') ~= ${luaStatus("input_required")} then return end
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(f, 1, 3) == 'in:' then return end
  end
  redis.call('HSET', KEYS[1], 'status', ${luaStatus("working")})
end

-- Ends every successful change: a new revision, lastUpdatedAt, and the hint on the task's channel.
local function bump(now, channel)
  local rev = redis.call('HINCRBY', KEYS[1], 'revision', 1)
  redis.call('HSET', KEYS[1], 'lastUpdatedAt', now)
  redis.call('PUBLISH', channel, tostring(rev))
end
`;

/**
 * The prelude of a named transition: its rule from task-rules.ts, and the checks every
 * transition makes, in the order of refuseChange (task-rules.ts), which makes the same ones for the
 * memory store. KEYS: 1 task hash, 2 outcome, 3 lease; ARGV: 1 principal or '' (any), 2 lease
 * token or '' (unfenced), 3 now (epoch ms), 4 hint channel. `done()` ends the script after the
 * change.
 */
export function transitionLua(kind: keyof typeof TRANSITION_RULES, body: string): string {
  const rule: TransitionRule = TRANSITION_RULES[kind];
  return `${TASK_LUA_PRELUDE}
-- ${kind}: the statuses it may start from (task-rules.ts TRANSITION_RULES).
local FROM = ${luaStatusSet(rule.from)}

local function refusal()
  local status = visible_status(ARGV[1])
  if not status then return {-1} end
  if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[2] then
    local c = current(); return {-2, c[1], c[2]}
  end
  if TERMINAL[status] or not FROM[status] then
    local c = current(); return {-3, c[1], c[2]}
  end
  return nil
end

-- Shorten the task's life to ttlMs from createdAt, for every key of it; a longer one changes nothing.
local function shorten(ttl)
  if ttl == '' or tonumber(ttl) >= tonumber(redis.call('HGET', KEYS[1], 'ttlMs')) then return end
  local at = string.format('%.0f', tonumber(redis.call('HGET', KEYS[1], 'createdAt')) + tonumber(ttl))
  redis.call('HSET', KEYS[1], 'ttlMs', ttl, 'expiresAt', at)
  redis.call('PEXPIREAT', KEYS[1], at)
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIREAT', KEYS[2], at) end
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIREAT', KEYS[3], at) end
end

local function done()
  bump(ARGV[3], ARGV[4])
  local c = current()
  return {1, c[1], c[2]}
end

local refused = refusal()
if refused then return refused end
${body}
`;
}
