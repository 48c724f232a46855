import type { LuaScript } from "../scripts.js";
import { luaStatus } from "./common.js";
import { orphanLua } from "./orphan.js";

/**
 * end-orphan-3: the reaper ends a task whose owner stopped: failed with an error, or cancelled
 * when a cancel was asked for. Only while it is an orphan (orphan.ts): non-terminal, still held under
 * the lapsed lease.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 now (epoch ms); 2 hint channel; 3 statusMessage; 4 the lapsed lease's token;
 *       5 'failed' | 'cancelled'; 6 outcome JSON or ''
 * Returns: {1, fields, outcome} ended; {-1} not found; {-2, fields, outcome} another lease holds it;
 *          {-3, fields, outcome} terminal already; an error reply for any other status in ARGV 5
 */
export const endOrphan: LuaScript = {
  name: "endOrphan",
  numberOfKeys: 3,
  lua: orphanLua(`if ARGV[5] ~= ${luaStatus("failed")} and ARGV[5] ~= ${luaStatus("cancelled")} then
  return redis.error_reply('end-orphan-3: an orphan ends failed or cancelled, not ' .. ARGV[5])
end
redis.call('HSET', KEYS[1], 'status', ARGV[5])
if ARGV[6] ~= '' then redis.call('SET', KEYS[2], ARGV[6], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
return done()`),
};
