import type { LuaScript } from "../scripts.js";

/**
 * admit-task-1: count a new task against its principal's limit of live tasks, atomically, so
 * concurrent creations on many replicas never pass the limit together.
 * KEYS: 1 the principal's quota set (member = task id, score = the task's expiry, epoch ms)
 * ARGV: 1 task id, 2 limit (0 = none), 3 the task's expiry (epoch ms), 4 now (epoch ms)
 * Returns: 1 admitted; 0 the principal holds `limit` live tasks already
 */
export const admitTask: LuaScript = {
  name: "admitTask",
  numberOfKeys: 1,
  lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[4])
local limit = tonumber(ARGV[2])
if limit > 0 and redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[3], 'NX')
redis.call('PEXPIREAT', KEYS[1], ARGV[3], 'GT')
return 1
`,
};
