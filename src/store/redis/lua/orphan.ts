import { luaStatusSet, TASK_LUA_PRELUDE } from "./common.js";
import { NON_TERMINAL } from "../../task-rules.js";

/**
 * The prelude of the reaper's two changes (end-orphan-3, claim-orphan-3): a task is an orphan
 * while it is non-terminal and still held under the lapsed lease the reaper names (a lapsed lease
 * never comes back), checked here atomically, so another replica that claimed it first wins and
 * the change does nothing.
 * KEYS: 1 task hash, 2 outcome, 3 lease; ARGV: 1 now (epoch ms), 2 hint channel, 3 statusMessage,
 * 4 the lapsed lease's token.
 * `done()` ends the script after the change.
 */
export function orphanLua(body: string): string {
  return `${TASK_LUA_PRELUDE}
local FROM = ${luaStatusSet(NON_TERMINAL)}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {-1} end
if TERMINAL[status] or not FROM[status] then local c = current(); return {-3, c[1], c[2]} end
local lease = redis.call('GET', KEYS[3])
if lease and lease ~= ARGV[4] then local c = current(); return {-2, c[1], c[2]} end

local function done()
  bump(ARGV[1], ARGV[2])
  local c = current()
  return {1, c[1], c[2]}
end

redis.call('HSET', KEYS[1], 'statusMessage', ARGV[3])
${body}
`;
}
