import type { LuaScript } from "../scripts.js";
import { luaStatus } from "./common.js";
import { orphanLua } from "./orphan.js";

/**
 * claim-orphan-3: a live replica takes over a task whose owner stopped, to run its call again:
 * held under the new owner's lease token from now on, the next attempt, back to working. Only
 * while it is an orphan (orphan.ts): non-terminal, still held under the lapsed lease's token. The
 * stopped run's questions died with it; the new run asks afresh under new keys. What the stopped
 * run started upstream (its upstream task, its stream position) stays: the claimer follows it
 * rather than running the call again.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 now (epoch ms); 2 hint channel; 3 statusMessage; 4 the lapsed lease's token; 5 new
 *       owner; 6 the new owner's lease token
 * Returns: {1, fields, outcome} claimed; {-1} not found; {-2, fields, outcome} another lease holds it;
 *          {-3, fields, outcome} terminal already
 */
export const claimOrphan: LuaScript = {
  name: "claimOrphan",
  numberOfKeys: 3,
  lua: orphanLua(`for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 3) == 'in:' or string.sub(f, 1, 4) == 'ans:' then redis.call('HDEL', KEYS[1], f) end
end
redis.call('HSET', KEYS[1], 'status', ${luaStatus("working")}, 'owner', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'attempt', 1)
redis.call('SET', KEYS[3], ARGV[6], 'PXAT', redis.call('HGET', KEYS[1], 'expiresAt'))
return done()`),
};
