import type { LuaScript } from "../scripts.js";

/**
 * release-lease-1: drop the lease if this token holds it, so a late owner never drops the lease
 * of the replica that took over.
 * KEYS: 1 lease
 * ARGV: 1 lease token
 * Returns: 1 released; 0 held by another token, or gone
 */
export const releaseLease: LuaScript = {
  name: "releaseLease",
  numberOfKeys: 1,
  lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]); return 1 end
return 0
`,
};
