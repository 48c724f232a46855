import type { LuaScript } from "../scripts.js";

/**
 * create-task-2: write a new task and its owner's lease, and announce revision 1.
 * KEYS: 1 task hash, 2 lease
 * ARGV: 1 lease token, 2 leaseMs, 3 expiresAt (epoch ms: createdAt + ttlMs), 4 hint channel,
 *       5.. field / value pairs of the hash (revision 1 among them)
 * Returns: {1} created; {-4} a task with this id exists
 */
export const createTask: LuaScript = {
  name: "createTask",
  numberOfKeys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return {-4} end
redis.call('HSET', KEYS[1], unpack(ARGV, 5, #ARGV))
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], redis.call('HGET', KEYS[1], 'revision'))
return {1}
`,
};
