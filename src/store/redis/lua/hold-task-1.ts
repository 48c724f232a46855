import type { LuaScript } from "../scripts.js";

/**
 * hold-task-1: list a task under the replica lease token it is created or claimed under, before
 * the task is written, so the reaper finds every task that exists. The set lives as long as its
 * longest-lived task. A script, not a pipeline, so it is confirmed with the task (durable-writes.ts).
 * KEYS: 1 the set of tasks held under the token (keys.ts heldUnder, or one of its spares)
 * ARGV: 1 task id; 2 the task's expiresAt (epoch ms)
 * Returns: 1
 */
export const holdTask: LuaScript = {
  name: "holdTask",
  numberOfKeys: 1,
  lua: `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2], 'NX')
redis.call('PEXPIREAT', KEYS[1], ARGV[2], 'GT')
return 1
`,
};
