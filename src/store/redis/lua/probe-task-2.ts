import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * probe-task-2: what the reaper needs to know of an indexed task, without changing it.
 * KEYS: 1 task hash, 2 lease
 * ARGV: none
 * Returns: 0 gone (expired, or terminal: drop it from the live index); 1 leased (its owner is
 *          alive); 2 orphan (non-terminal and no lease: its owner stopped renewing)
 */
export const probeTask: LuaScript = {
  name: "probeTask",
  numberOfKeys: 2,
  lua: `${TASK_LUA_PRELUDE}
local status = redis.call('HGET', KEYS[1], 'status')
if not status or TERMINAL[status] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
return 2
`,
};
