import type { TerminalStatus } from "../../task-rules.js";
import { luaStatus } from "./common.js";

/**
 * The body the three endings share (complete-task-3, fail-task-3, cancel-task-3): the terminal
 * status, the last statusMessage, a shorter life, then the outcome, which lives as long as the task
 * (so it is written after the life is shortened). `first` is the ARGV index of the outcome:
 * first outcome JSON or ''; first + 1 shorter ttlMs or ''; first + 2 statusMessage (absent: kept).
 */
export function endingLua(to: TerminalStatus, first: number): string {
  return `
redis.call('HSET', KEYS[1], 'status', ${luaStatus(to)})
if ARGV[${first + 2}] then redis.call('HSET', KEYS[1], 'statusMessage', ARGV[${first + 2}]) end
shorten(ARGV[${first + 1}])
if ARGV[${first}] ~= '' then redis.call('SET', KEYS[2], ARGV[${first}], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
return done()`;
}
