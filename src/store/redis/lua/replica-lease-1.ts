import type { LuaScript } from "../scripts.js";
import { STORE_CLOCK_LUA } from "./common.js";

/**
 * replica-lease-1: start, renew or end a replica's lease, by the store's own clock (TIME), so the
 * replicas' clocks never decide whose lease lapsed. A lease that lapsed is over for good: a renewal
 * that comes too late is refused, and the replica takes a new token.
 * KEYS: 1 the leases (sorted set: token → when its lease lapses, ms)
 * ARGV: 1 token; 2 leaseMs; 3 'start' (a new token) | 'renew' | 'end' (lapses now: its tasks are orphans)
 * Returns: 1 held (or ended); 0 the lease lapsed already, or a start of a token already known
 */
export const replicaLease: LuaScript = {
  name: "replicaLease",
  numberOfKeys: 1,
  lua: `${STORE_CLOCK_LUA}
if ARGV[3] == 'end' then
  if redis.call('ZSCORE', KEYS[1], ARGV[1]) then redis.call('ZADD', KEYS[1], 'XX', ms(now), ARGV[1]) end
  return 1
end
local lapses = redis.call('ZSCORE', KEYS[1], ARGV[1])
if ARGV[3] == 'renew' then
  if not lapses or tonumber(lapses) <= now then return 0 end
elseif ARGV[3] == 'start' then
  if lapses then return 0 end
else
  return redis.error_reply('replica-lease-1: start, renew or end, not ' .. ARGV[3])
end
redis.call('ZADD', KEYS[1], ms(now + tonumber(ARGV[2])), ARGV[1])
return 1
`,
};
