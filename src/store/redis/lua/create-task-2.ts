import type { LuaScript } from "../scripts.js";

/**
 * create-task-2: write a new task and the token of the replica lease it is held under (kept as
 * long as the task: the replica's lease, not the task's, is what lapses), and announce revision 1.
 * KEYS: 1 task hash, 2 lease
 * ARGV: 1 lease token, 2 expiresAt (epoch ms: createdAt + ttlMs), 3 hint channel,
 *       4.. field / value pairs of the hash (revision 1 among them)
 * Returns: {1} created; {-4} a task with this id exists
 */
export const createTask: LuaScript = {
  name: "createTask",
  numberOfKeys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return {-4} end
redis.call('HSET', KEYS[1], unpack(ARGV, 4, #ARGV))
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'PXAT', ARGV[2])
redis.call('PUBLISH', ARGV[3], redis.call('HGET', KEYS[1], 'revision'))
return {1}
`,
};
