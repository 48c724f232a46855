import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * probe-task-2: what the reaper needs to know of a task listed under a lapsed lease, without
 * changing it.
 * KEYS: 1 task hash, 2 lease
 * ARGV: 1 the lapsed lease's token
 * Returns: 0 missing (expired, or not written yet: a create under the lease may still land);
 *          1 held under another lease (claimed since: drop it); 2 orphan (non-terminal, still held
 *          under the lapsed token); 3 ended (drop it)
 */
export const probeTask: LuaScript = {
  name: "probeTask",
  numberOfKeys: 2,
  lua: `${TASK_LUA_PRELUDE}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if TERMINAL[status] then return 3 end
local lease = redis.call('GET', KEYS[2])
if lease and lease ~= ARGV[1] then return 1 end
return 2
`,
};
