import type { LuaScript } from "../scripts.js";
import { luaStatus } from "./common.js";
import { orphanLua } from "./orphan.js";

/**
 * end-orphan-3: the reaper ends a task whose owner stopped: failed with an error, or cancelled
 * when a cancel was asked for. Only while it is an orphan (orphan.ts): non-terminal, no lease.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 now (epoch ms); 2 hint channel; 3 statusMessage; 4 'failed' | 'cancelled'; 5 outcome JSON or ''
 * Returns: {1, fields, outcome} ended; {-1} not found; {-2, fields, outcome} a lease holds it;
 *          {-3, fields, outcome} terminal already; an error reply for any other status in ARGV 4
 */
export const endOrphan: LuaScript = {
  name: "endOrphan",
  numberOfKeys: 3,
  lua: orphanLua(`if ARGV[4] ~= ${luaStatus("failed")} and ARGV[4] ~= ${luaStatus("cancelled")} then
  return redis.error_reply('end-orphan-3: an orphan ends failed or cancelled, not ' .. ARGV[4])
end
redis.call('HSET', KEYS[1], 'status', ARGV[4])
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt')) end
return done()`),
};
