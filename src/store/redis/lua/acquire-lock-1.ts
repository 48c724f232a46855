import type { LuaScript } from "../scripts.js";

/**
 * acquire-lock-1: take a lock nobody holds, or keep the one this holder has, for ttlMs.
 * KEYS: 1 lock
 * ARGV: 1 holder, 2 ttlMs
 * Returns: 1 held by this holder now; 0 held by another
 */
export const acquireLock: LuaScript = {
  name: "acquireLock",
  numberOfKeys: 1,
  lua: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]); return 1 end
return 0
`,
};
