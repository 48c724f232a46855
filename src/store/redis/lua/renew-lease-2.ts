import type { LuaScript } from "../scripts.js";

/**
 * renew-lease-2: extend the lease if this token holds it, and say what waits for the owner.
 * Run once per task, all of a replica's tasks in one pipeline (one round trip per interval).
 * KEYS: 1 task hash, 2 lease
 * ARGV: 1 lease token, 2 leaseMs
 * Returns: {held 0|1, cancelRequested 0|1, answers waiting 0|1}; {0, 0, 0} when the task is gone
 *          (a lease can outlive its task by up to leaseMs: it is not held then)
 */
export const renewLease: LuaScript = {
  name: "renewLease",
  numberOfKeys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, 0} end
local held = 0
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('PEXPIRE', KEYS[2], ARGV[2]); held = 1 end
local cancel = 0
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then cancel = 1 end
local answers = 0
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 4) == 'ans:' then answers = 1; break end
end
return {held, cancel, answers}
`,
};
