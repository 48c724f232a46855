import type { LuaScript } from "../scripts.js";

/**
 * create-task-3: write a new task and its owner's lease.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 lease token, 2 leaseMs, 3 expiresAt (epoch ms), 4 hint channel, 5.. field/value pairs
 * Returns: 1 created; -1 a task with this id exists
 */
export const createTask: LuaScript = {
  name: "createTask",
  numberOfKeys: 3,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], '1')
return 1
`,
};
