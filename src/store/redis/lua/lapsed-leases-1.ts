import type { LuaScript } from "../scripts.js";
import { STORE_CLOCK_LUA } from "./common.js";

/**
 * lapsed-leases-1: the replica leases that lapsed, by the store's clock (TIME), oldest first.
 * KEYS: 1 the leases (sorted set: token → when its lease lapses, ms)
 * ARGV: 1 at most this many
 * Returns: {now, token, lapsedAt, token, lapsedAt, ...} (times in ms, as strings)
 */
export const lapsedLeases: LuaScript = {
  name: "lapsedLeases",
  numberOfKeys: 1,
  lua: `${STORE_CLOCK_LUA}
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms(now), 'WITHSCORES', 'LIMIT', 0, ARGV[1])
table.insert(found, 1, ms(now))
return found
`,
};
